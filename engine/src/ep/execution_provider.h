// The execution-provider interface: what the partitioner asks each EP, and how a partition becomes a compiled,
// plain-data artifact that the EP can later load and run (from a fresh compile or, later, a context binary).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kiln/progress.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/timings.h"

namespace kiln {

// One node's answer from an EP's capability query.
struct NodeSupport {
  bool supported = false;
  std::string reason;  // why not, when unsupported
  bool onHost = false;  // supported, but evaluated on the host inside the partition (shape arithmetic): no device work
};

// A group of nodes of one graph that one EP runs as a unit. Inputs/outputs are the values crossing its border:
// inputs include the graph's initializers the nodes read and names read from enclosing graphs (in a body).
struct PartitionSpec {
  std::string name;
  std::vector<size_t> nodeIndices;  // into graph.nodes, topological order
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// What an EP decided for one node of a compiled partition, stored so that loading the partition again (from a
// context binary) neither re-places nor repacks anything.
struct CompiledNode {
  bool onHost = false;            // Vulkan: evaluated on the host (shape arithmetic), not dispatched
  std::vector<Tensor> constants;  // prepacked constants in the kernel's registration order
  // Inputs whose constant values the constants replace (never read at run time): a context binary keeps only the
  // type and shape of an initializer that no other reader needs. Known after compile; not stored.
  std::vector<size_t> absorbedInputs;
};

// One kernel's autotune result (kiln.vulkan.autotune=1): the candidate chosen and every candidate's best time.
struct TunedKernel {
  size_t node = 0;     // index into the partition's graph nodes (and CompiledPartition::nodes)
  std::string label;   // the node's label (what inspect shows)
  std::string chosen;  // the chosen candidate's name (VkKernel::candidateName)
  std::vector<std::pair<std::string, double>> trials;  // candidate name -> best measured ms, in candidate order
};

// A partition's autotune record: the choices, or why there are none (a cross-compile for a device profile, input
// shapes that are not fixed). `requested`: kiln.vulkan.autotune was on when it was compiled.
struct PartitionTuning {
  bool requested = false;
  std::vector<TunedKernel> kernels;
  std::string note;  // empty when tuned on the live device
};

// The result of compiling a partition: plain data only (no device handles), so it can be serialized into a
// context binary and loaded without the source model.
struct CompiledPartition {
  std::string name;
  std::string executionProvider;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::shared_ptr<const ir::Graph> graph;   // the partition's nodes (after device fusions) and what they read
  std::map<std::string, int64_t> opsets;    // opset imports the nodes were compiled against
  std::vector<CompiledNode> nodes;          // parallel to graph->nodes; empty for EPs that store nothing per node
  std::map<std::string, std::vector<uint32_t>> spirv;  // Vulkan: shader variant key -> SPIR-V module
  std::string targetProfile;                // Vulkan: the device profile (JSON) the kernels were chosen for
  bool targetIsProfile = false;             // Vulkan: cross-compiled for a profile, not for the live device
  PartitionTuning tuning;                   // Vulkan: autotune choices, applied when the partition is loaded
  // Vulkan: SPIR-V variant key -> indices (into graph->nodes) of the nodes whose kernels dispatch it, for viewers;
  // empty when not recorded (read from a binary written before format 1.2). Never needed to run.
  std::map<std::string, std::vector<size_t>> pipelineUsers;
  // What the EP stores of the partition in its own format: opaque to the framework, kept as-is in the context
  // binary (its provider-data section) and handed back to the same EP's load(). Empty: the EP stores nothing more.
  std::vector<std::byte> providerData;
};

// One node's device work in a partition's last run: when it started on the device, in ms after the partition's
// first dispatch started (device timestamps), and how long it took.
struct DeviceNodeTime {
  std::string node;  // the node's label
  double startMs = 0;
  double ms = 0;
};

// A loaded compiled partition, ready to run.
class PartitionExecutable {
 public:
  virtual ~PartitionExecutable() = default;
  // Inputs in CompiledPartition::inputs order; returns outputs in CompiledPartition::outputs order, in host memory.
  // An input may be a device tensor (tensor.h): a device EP reads its own device's in place, any other is read back.
  virtual Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) = 0;
  // run(), leaving output o in device memory (a device tensor) where keepOnDevice[o] is set and the EP computed it
  // there. The default reads every output back (an EP without device memory).
  virtual Result<std::vector<Tensor>> runKeeping(std::span<const Tensor> inputs, const std::vector<bool>& keepOnDevice) {
    (void)keepOnDevice;
    return run(inputs);
  }
  // Bytes this partition's runs copied between host and device memory since it was loaded.
  virtual TransferCounters transfers() const { return {}; }
  // The device time of each node that dispatched work in the last run, in run order; empty when the partition
  // does not measure device time.
  virtual std::vector<DeviceNodeTime> lastNodeDeviceTimes() const { return {}; }
};

struct CompileContext {
  const ir::Model& model;
  const ProgressSink* progress = nullptr;
  int intraOpThreads = 1;
  SessionTimings* timings = nullptr;   // EPs add their stage times (glslang_ms, pipeline_create_ms, ...) when set
  WorkCounters* counters = nullptr;    // and their work counters
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;
  // "CPUExecutionProvider", "VulkanExecutionProvider".
  virtual const std::string& name() const = 0;
  // Which nodes of `graph` this EP can run (one answer per node, in order). Called once per graph: the top-level
  // graph and every If/Loop/Scan body (names a body reads but does not define come from enclosing graphs).
  // Nodes that own bodies always stay on the CPU EP, whatever the answer.
  virtual std::vector<NodeSupport> getCapability(const ir::Graph& graph, const ir::Model& model) const = 0;
  // True when running a partition costs a submit and copies of the values crossing its border (a device EP): the
  // partitioner then weighs each partition's cost (partition/partition_cost.h) and keeps the ones that lose on the
  // CPU EP. False (the default): the EP takes every node it claims.
  virtual bool paysForTransfers() const { return false; }
  // Compiles one partition of `graph` into plain data.
  virtual Result<CompiledPartition> compile(const ir::Graph& graph, const PartitionSpec& spec,
                                            const CompileContext& context) = 0;
  // Before a session loads its stored partitions of this EP (a context binary's), all of them at once: work the
  // EP does better for the whole set than partition by partition (the Vulkan EP creates every pipeline in one
  // parallel stage). load() is still called for each.
  virtual Status prepareLoad(std::span<const CompiledPartition* const> partitions, const CompileContext& context) {
    (void)partitions;
    (void)context;
    return Status::ok();
  }
  // True when what the EP exports into a context binary needs its partitions loaded first (the Vulkan EP on a
  // live device stores the driver's pipeline cache, which pipeline creation fills). False: compile() alone yields
  // everything exported (a cross-compile for a device profile), so a compile opens no device and uploads nothing.
  virtual bool exportNeedsLoad() const { return true; }
  // Loads a compiled partition for running.
  virtual Result<std::unique_ptr<PartitionExecutable>> load(const CompiledPartition& partition,
                                                            const CompileContext& context) = 0;
  // Called once a session has loaded all its partitions (ONNX Runtime's OnSessionInitializationEnd): the place
  // for work that follows session creation, such as saving a cache. An error fails session creation, so work
  // that is only an optimization logs its failures instead.
  virtual Status onSessionInitializationEnd() { return Status::ok(); }
};

}  // namespace kiln
