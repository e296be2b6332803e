// SequenceMap (opset 17): runs the `body` graph once per position of the input sequence. Body input j receives
// element i of node input j when that input is a sequence (all sequences must have the same length), or the whole
// value when it is a tensor; body output k, collected over the iterations, becomes sequence output k. An empty
// input sequence gives empty output sequences typed as the body declares its outputs.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

class SequenceMapKernel final : public Kernel {
 public:
  explicit SequenceMapKernel(const KernelInfo& info) : label_(info.node.label()) {}

  Status init(const KernelInfo& info) {
    const ir::Graph* body = info.node.subgraph("body");
    if (!body) return nodeError(label_, "missing graph attribute 'body'");
    if (!info.createSubgraphExecutor) return notImplemented(label_ + ": this session cannot run subgraphs");
    if (body->inputs.size() != info.node.inputs.size()) {
      return nodeError(label_, "body takes " + std::to_string(body->inputs.size()) + " inputs, the node has " +
                                   std::to_string(info.node.inputs.size()));
    }
    if (body->outputs.size() != info.node.outputs.size()) {
      return nodeError(label_, "body has " + std::to_string(body->outputs.size()) + " outputs, the node has " +
                                   std::to_string(info.node.outputs.size()));
    }
    for (const ir::ValueInfo& output : body->outputs) outputTypes_.push_back(output.dtype);
    KILN_ASSIGN_OR_RETURN(body_, info.createSubgraphExecutor(*body));
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const Value first = ctx.inputValue(0);
    if (!first.isSequence()) return nodeError(label_, "input 0 must be a sequence, got " + first.describe());
    const size_t count = first.tensors().size();
    std::vector<Value> inputs(ctx.inputCount());
    for (size_t j = 0; j < inputs.size(); ++j) {
      inputs[j] = ctx.inputValue(j);
      if (!inputs[j].isSequence() && !inputs[j].isTensor()) {
        return nodeError(label_, "input " + std::to_string(j) + " must be a sequence or a tensor, got " +
                                     inputs[j].describe());
      }
      if (inputs[j].isSequence() && inputs[j].tensors().size() != count) {
        return nodeError(label_, "input sequences differ in length (" + std::to_string(count) + " and " +
                                     std::to_string(inputs[j].tensors().size()) + ")");
      }
    }
    std::vector<std::vector<Tensor>> results(outputTypes_.size());
    std::vector<Value> bodyInputs(inputs.size());
    for (size_t i = 0; i < count; ++i) {
      for (size_t j = 0; j < inputs.size(); ++j) {
        bodyInputs[j] = inputs[j].isSequence() ? Value(inputs[j].tensors()[i]) : inputs[j];
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, body_->runValues(bodyInputs));
      for (size_t k = 0; k < results.size() && k < outputs.size(); ++k) {
        if (!outputs[k].isTensor()) {
          return nodeError(label_, "body output " + std::to_string(k) + " must be a tensor, got " +
                                       outputs[k].describe());
        }
        results[k].push_back(outputs[k].tensor());
      }
    }
    for (size_t k = 0; k < results.size() && k < ctx.outputCount(); ++k) {
      const DataType type = results[k].empty() ? outputTypes_[k] : results[k][0].dtype();
      KILN_RETURN_IF_ERROR(ctx.setOutputValue(k, Value::sequence(type, std::move(results[k]))));
    }
    return Status::ok();
  }

 private:
  std::string label_;
  std::unique_ptr<SubgraphExecutor> body_;
  std::vector<DataType> outputTypes_;
};

Result<std::unique_ptr<Kernel>> createSequenceMap(const KernelInfo& info) {
  auto kernel = std::make_unique<SequenceMapKernel>(info);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerSequenceMapKernels(KernelRegistry& registry) { registry.add("SequenceMap", 17, kAnyOpset, createSequenceMap); }

}  // namespace kiln::cpu
