// Runs a graph's nodes with CPU kernels: a static plan built once (value slots, each step's bound input and output
// arrays, release points, the enclosing scope's slots a body reads), so a run makes no per-step vectors, maps or
// string lookups; tensors are released after their last use. Also runs subgraph bodies for control-flow kernels.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/node_profiler.h"
#include "ir/graph.h"
#include "kiln/progress.h"
#include "kiln/tensor_size.h"

namespace kiln::cpu {

// Values visible to a running graph, by name.
class ValueScope {
 public:
  virtual ~ValueScope() = default;
  // The current value of `name` in this scope or an enclosing one, or nullptr.
  virtual const Tensor* lookup(const std::string& name) const = 0;
  // The current sequence or optional value of `name` in this scope or an enclosing one, or nullptr (also when
  // `name` holds a tensor: lookup() has those).
  virtual const Value* lookupValue(const std::string& name) const {
    (void)name;
    return nullptr;
  }
};

struct ExecutorConfig {
  std::map<std::string, int64_t> opsets;  // domain -> version, from the model
  int intraOpThreads = 1;
  // Shared with subgraph executors; create() fills them in when null (the thread pool from intraOpThreads).
  std::shared_ptr<ThreadPool> threadPool;
  std::shared_ptr<BufferPool> bufferPool;
  // Bytes of device tensors read back to host memory for CPU kernels (shared with subgraph executors).
  std::shared_ptr<std::atomic<uint64_t>> deviceReadBytes;
  const ProgressSink* progress = nullptr;  // checked for cancellation between nodes
  NodeProfiler* profiler = nullptr;        // when set and active, every node's kernel is timed into it
  std::string graphPath = "main";          // this graph's path for the profiler (ir/graph_paths.h)
  bool floatOnOneDnn = false;              // KernelInfo::floatOnOneDnn of every kernel
  // Top-level graphs only: float16 chains of type-generic nodes compute in float32 with Casts at their
  // edges (float16_compute.h), as onnxruntime's CPU EP does. Subgraph bodies run as they are.
  bool float16InFloat32 = true;
  // The top-level executor of a session: create() plans the first run's memory from the inferred shapes (buffers
  // reserved in the pool, pages mapped) and has oneDNN's sgemm JIT generated (once per process), so the first run
  // costs what later ones do. Subgraph executors never plan.
  bool prepareFirstRun = false;
  uint64_t maxTensorBytes = kDefaultMaxTensorBytes;  // kiln.max_tensor_bytes: values over it are never planned
  // Consulted before the CPU kernel registry for every node, also in subgraph bodies (children inherit the
  // config): returns a kernel for nodes it owns (the session's KilnPartition nodes), a null pointer otherwise.
  std::function<Result<std::unique_ptr<Kernel>>(const KernelInfo&)> externalKernel;
};

class GraphExecutor final : public ValueScope {
 public:
  // Builds a kernel for every node of `graph` (rewritten first when config.float16InFloat32 applies: graph() is then
  // the rewritten copy). `outer` resolves names the graph reads but does not define
  // (subgraph bodies); it must outlive the executor. NOT_IMPLEMENTED names the first node without a kernel.
  static Result<std::unique_ptr<GraphExecutor>> create(std::shared_ptr<const ir::Graph> graph,
                                                       const ExecutorConfig& config, const ValueScope* outer = nullptr);

  // Binds the graph's inputs in order (a missing trailing input falls back to its initializer) and returns the
  // graph's outputs in order.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);
  // run() for values of any kind (sequences and optionals included); run() fails on a non-tensor output.
  Result<std::vector<Value>> runValues(std::span<const Value> inputs);

  const Tensor* lookup(const std::string& name) const override;
  const Value* lookupValue(const std::string& name) const override;
  const ir::Graph& graph() const { return *graph_; }
  // Reuse of tensor storage across runs (after a warm-up run of a shape, `allocated` stops growing).
  BufferPool::Stats bufferStats() const { return bufferPool_->stats(); }
  // Buffers reserved at creation for values with static shapes (0 when nothing was static).
  size_t plannedBuffers() const { return plannedBuffers_; }
  // Bytes of device tensors (tensor.h) this executor and its bodies read back so that CPU kernels could use them.
  uint64_t deviceBytesRead() const { return deviceReadBytes_->load(); }
  // Nodes of this graph planned to run inside the kernel of their producer (elementwise_epilogue.h).
  size_t fusedNodeCount() const { return fusedNodes_; }

 private:
  struct Step {
    const ir::Node* node = nullptr;
    std::unique_ptr<Kernel> kernel;
    std::vector<int> inputs;   // slot per input, -1 when omitted
    std::vector<int> outputs;  // slot per output, -1 when omitted
    std::vector<int> release;  // slots whose last reader is this step
    bool external = false;     // the kernel came from ExecutorConfig::externalKernel (a partition: outputs its own)
    // A fused elementwise chain (elementwise_epilogue.h): the anchor's chain, its runtime inputs and result slot;
    // a follower names its anchor's step and is skipped when the anchor applied the chain.
    std::shared_ptr<const ElementwiseEpilogue> epilogue;
    std::vector<int> epilogueInputs;
    int epilogueOutput = -1;
    int fusedInto = -1;
    // Bound once, refilled in place each run (their sizes are the node's input and output counts).
    std::vector<const Tensor*> boundInputs;
    std::vector<const Value*> boundValueInputs;
    std::vector<Tensor> producedTensors;
    std::vector<Tensor> hostCopies;  // device inputs read back for a CPU kernel, this run only
    std::vector<Value> producedValues;
  };
  // A name this graph reads from the enclosing executor, bound to that executor's slot at the first run (the
  // enclosing frame no longer moves then); null pointers when the enclosing scope is not an executor.
  struct OuterBinding {
    int slot = -1;
    const Tensor* tensor = nullptr;
    const Value* value = nullptr;
  };

  GraphExecutor(std::shared_ptr<const ir::Graph> graph, const ValueScope* outer) : graph_(std::move(graph)), outer_(outer) {}
  int slotFor(const std::string& name);
  Status build(const ExecutorConfig& config);
  // Fills the slots read from the enclosing scope for this run.
  Status bindOuterValues();
  // Reserves in the buffer pool, pages mapped, the buffers a run takes for values whose shapes inference fixed,
  // in the run's order (graph_executor_memory_plan.cpp); returns how many (0, nothing reserved, when a value would
  // pass the tensor limit or the run's peak half the machine's memory).
  size_t planMemory(uint64_t maxTensorBytes);
  // Replays a run's use of the pool: `take` per output slot the run allocates, `release` per slot a step frees.
  void replayAllocations(const std::function<void(int slot)>& take,
                         const std::function<void(int slot)>& release) const;
  // Points step's bound device tensors (a CPU kernel cannot read device memory) at host copies made for this run.
  Status readDeviceInputs(Step& step);
  // Drops every value of the last run (initializers stay; a fed initializer gets its own value back).
  void clearRunValues();

  std::shared_ptr<const ir::Graph> graph_;
  const ValueScope* outer_;
  std::unordered_map<std::string, int> slots_;
  std::vector<Tensor> frame_;
  std::vector<Value> values_;  // per slot: its sequence or optional value (tensors stay in frame_)
  std::vector<bool> pinned_;                         // initializers: never released
  std::vector<std::pair<int, std::string>> outerNames_;  // slots filled from the enclosing scope at each run
  std::vector<OuterBinding> outerBindings_;              // outerNames_ bound to the enclosing frame's slots
  bool outerBound_ = false;
  std::vector<int> clearedSlots_;  // slots a run may set: everything but initializers, plus the graph inputs
  std::vector<int> inputSlots_, outputSlots_;
  std::vector<Step> steps_;
  std::vector<char> chainApplied_;
  size_t plannedBuffers_ = 0;
  size_t fusedNodes_ = 0;  // per step: its epilogue ran in this run
  const ProgressSink* progress_ = nullptr;
  NodeProfiler* profiler_ = nullptr;
  std::string graphPath_;
  std::shared_ptr<ThreadPool> threadPool_;
  std::shared_ptr<BufferPool> bufferPool_;
  std::shared_ptr<std::atomic<uint64_t>> deviceReadBytes_;
  bool running_ = false;
  std::jthread sgemmWarmUp_;  // oneDNN's sgemm JIT generated in the background (create()); joined on destruction
};

}  // namespace kiln::cpu
