// A loaded Vulkan partition: kernels with their pipelines and uploaded constants, run by recording every node
// into one command buffer (host nodes evaluate while recording), submitting once and reading the outputs back.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "ep/execution_provider.h"
#include "ep/host_evaluator.h"
#include "ep/vulkan/command_stream.h"
#include "ep/vulkan/vk_kernel.h"
#include "kiln/timings.h"

namespace kiln::vk {

// One node of the partition, ready to record.
struct PartitionStep {
  const ir::Node* node = nullptr;
  std::unique_ptr<VkKernel> kernel;           // DEVICE nodes
  std::unique_ptr<HostNode> hostKernel;       // HOST nodes
  std::vector<const Pipeline*> pipelines;     // one per kernel->shaders() entry
  std::vector<VkTensor> constants;            // kernel->constants() on the device
};

class VulkanPartitionExecutable final : public PartitionExecutable {
 public:
  // `graph` holds the partition's nodes (in order, matching `steps`) and the initializers they read.
  static Result<std::unique_ptr<VulkanPartitionExecutable>> create(std::shared_ptr<Device> device,
                                                                   std::shared_ptr<const ir::Graph> graph,
                                                                   std::vector<std::string> inputs,
                                                                   std::vector<std::string> outputs,
                                                                   std::vector<PartitionStep> steps,
                                                                   double* weightUploadMs, bool profile = false,
                                                                   SessionTimings* autotuneTimings = nullptr);

  // Safe to call from several threads: runs of one partition are serialized (one command stream each). A device
  // tensor of this partition's device is read in place; any other device tensor is read back and uploaded.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override;
  // run(), returning the outputs marked in `keepOnDevice` as device tensors (vulkan/device_tensor.h) that share the
  // run's device storage; an output computed on the host (shape arithmetic) stays a host tensor.
  Result<std::vector<Tensor>> runKeeping(std::span<const Tensor> inputs, const std::vector<bool>& keepOnDevice) override;
  TransferCounters transfers() const override { return {uploadedBytes_.load(), downloadedBytes_.load()}; }

  // The autotune choices made by the first run (kernels with candidates), in step order; empty before it.
  std::vector<TunedKernel> tunedKernels() const;

  // Called on the tuning run before each kernel's candidates are timed, with how many kernels are tuned so far, how
  // many the run tunes and the node's label: a compile reports autotune progress through it, and a non-OK status
  // (CANCELLED) ends the run there, so a cancel is honoured between kernels rather than after the whole run.
  using TuningObserver = std::function<Status(size_t tuned, size_t toTune, const std::string& node)>;
  void setTuningObserver(TuningObserver observer) { tuningObserver_ = std::move(observer); }

  // kiln.vulkan.profile=1: each dispatching node's device ms in the last run (timestamps around its dispatches).
  std::vector<DeviceNodeTime> lastNodeDeviceTimes() const override;

 private:
  struct Slotted {
    std::vector<int> inputs, outputs, release;
  };
  VulkanPartitionExecutable() = default;
  Status build(double* weightUploadMs);
  Result<std::vector<Tensor>> runLocked(std::span<const Tensor> inputs, const std::vector<bool>* keepOnDevice);
  // Puts input i into its frame slot: device storage of this device as it is, everything else as host data.
  Status bindInput(VkTensor& value, const Tensor& input, int slot);
  // Times every candidate of step s's kernel on the current run's inputs (a side stream, wall clock, best of 3) and
  // selects the fastest. The frame is copied: outputs of the trials are dropped.
  Status autotuneStep(size_t s, const std::vector<VkTensor>& frame);
  // Per-dispatch device times of the last run from timestamp queries (kiln.vulkan.profile=1), logged by op type and
  // kept per node for lastNodeDeviceTimes().
  void reportProfile(const std::vector<std::pair<size_t, int>>& marks);

  std::shared_ptr<Device> device_;
  std::shared_ptr<const ir::Graph> graph_;
  std::vector<std::string> inputNames_, outputNames_;
  std::vector<PartitionStep> steps_;
  std::vector<Slotted> slots_;
  std::vector<VkTensor> frameTemplate_;  // initializers filled in; everything else empty
  std::vector<int> inputSlots_, outputSlots_;
  std::unordered_set<int> hostReadSlots_;  // slots a host node reads (a device input there is read back too)
  std::atomic<uint64_t> uploadedBytes_{0}, downloadedBytes_{0};
  std::unique_ptr<CommandStream> stream_;
  bool profile_ = false;
  bool autotune_ = false;                // kiln.vulkan.autotune=1 and not tuned yet
  // Device-read initializers whose bytes a compile left in their external-data file: not uploaded, so the
  // executable of such a compile-only session refuses to run.
  std::vector<std::string> unloadedWeights_;
  SessionTimings* autotuneTimings_ = nullptr;  // the session's timings (autotune_ms), owned by the session
  std::unique_ptr<CommandStream> tuneStream_;
  std::vector<TunedKernel> tuned_;  // what autotuneStep chose and measured
  TuningObserver tuningObserver_;
  size_t kernelsToTune_ = 0;  // steps whose kernel has candidates
  std::vector<DeviceNodeTime> lastNodeDeviceTimes_;  // reportProfile's per-node times
  mutable std::mutex runMutex_;
};

// Writes `tensor` into new device storage now (load time: no commands in flight).
Result<VkTensor> uploadNow(Device& device, const Tensor& tensor);

}  // namespace kiln::vk
