// The CPU EP's kernel interface: a kernel is created once per node (reading attributes and constant inputs)
// and computed once per run.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep/cpu/buffer_pool.h"
#include "ep/cpu/elementwise_epilogue.h"
#include "ep/cpu/thread_pool.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::cpu {

class SubgraphExecutor;

// Runs a subgraph body (If branch, Loop/Scan body) with values from the enclosing scope visible.
class SubgraphExecutor {
 public:
  virtual ~SubgraphExecutor() = default;
  // `inputs` bind the body's formal inputs in order; returns the body's outputs in order.
  virtual Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) = 0;
  // The same for bodies whose inputs or outputs may be sequences or optionals.
  virtual Result<std::vector<Value>> runValues(std::span<const Value> inputs) = 0;
};

// What a kernel knows when it is created.
struct KernelInfo {
  const ir::Node& node;
  int64_t opset = 0;  // the model's opset for the node's domain
  // Constant inputs (initializers) by input index; nullptr where the input is not constant or absent.
  std::vector<const Tensor*> constantInputs;
  // Builds an executor for a subgraph attribute of this node (control-flow kernels only).
  std::function<Result<std::unique_ptr<SubgraphExecutor>>(const ir::Graph&)> createSubgraphExecutor;
  // The session's intra-op threads; null where kernels run outside a session (constant folding): run inline.
  ThreadPool* threadPool = nullptr;
  // What shape inference knows of each input (nullptr where nothing): kernels may prepare for it at creation
  // (weights packed for a static shape), never rely on it, since a run may feed other shapes.
  std::vector<const ir::ValueInfo*> inputInfos;
  // Float convolutions run on oneDNN's convolution primitive (kiln.cpu.float_kernels=onednn); false (the default)
  // keeps the im2col + GEMM path.
  bool floatOnOneDnn = false;

  // Input i's shape when inference fixed every dimension of it; nullopt otherwise.
  std::optional<Shape> staticInputShape(size_t i) const;
  // Input i's inferred element type; UNDEFINED when unknown.
  DataType inputType(size_t i) const;
};

// What a kernel sees when it runs.
class KernelContext {
 public:
  // `pool` (optional) provides output storage reused across runs; `epilogue` (optional) is the elementwise chain
  // planned after this node, which a kernel that can fuse it applies to output 0.
  KernelContext(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs, BufferPool* pool = nullptr,
                EpilogueBinding* epilogue = nullptr)
      : inputs_(inputs), outputs_(outputs), pool_(pool), epilogue_(epilogue) {}

  size_t inputCount() const { return inputs_.size(); }
  // The i-th input, or nullptr when it is omitted (empty name) or i >= inputCount().
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool hasInput(size_t i) const { return input(i) != nullptr; }
  size_t outputCount() const { return outputs_.size(); }
  // Allocates output i (zero-filled) and returns it for writing.
  Tensor& allocateOutput(size_t i, DataType type, Shape shape);
  // Allocates output i with undefined contents, for kernels that write every element (the hot ones).
  Tensor& allocateUninitializedOutput(size_t i, DataType type, Shape shape);
  // Sets output i to an existing tensor (views and pass-through are fine: tensors are immutable once set).
  void setOutput(size_t i, Tensor tensor) { outputs_[i] = std::move(tensor); }
  // The chain to fuse into output 0, or nullptr; a kernel that applies it calls markApplied() on it.
  EpilogueBinding* epilogue() const { return epilogue_; }

  // Sequence and optional values (kiln/value.h). The executor binds them; input(i) is nullptr for such inputs.
  // `inputs[i]` is null where input i is a tensor or omitted; outputs set through setOutputValue land in `outputs`.
  void bindValues(std::span<const Value* const> inputs, std::vector<Value>* outputs) {
    valueInputs_ = inputs;
    valueOutputs_ = outputs;
  }
  // Input i of any kind (a tensor input as a tensor Value); an undefined Value when omitted.
  Value inputValue(size_t i) const;
  // Sets output i to a value of any kind (a tensor value goes to setOutput). FAIL for a sequence or optional where
  // no value outputs are bound (a kernel run outside an executor, as by constant folding).
  Status setOutputValue(size_t i, Value value);

 private:
  std::span<const Value* const> valueInputs_;
  std::vector<Value>* valueOutputs_ = nullptr;
  std::span<const Tensor* const> inputs_;
  std::vector<Tensor>& outputs_;
  BufferPool* pool_;
  EpilogueBinding* epilogue_;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status compute(KernelContext& ctx) = 0;
};

using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(const KernelInfo&)>;

// Convenience: a factory for a kernel class constructible from KernelInfo.
template <class K>
KernelFactory makeFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> { return std::unique_ptr<Kernel>(new K(info)); };
}

}  // namespace kiln::cpu
