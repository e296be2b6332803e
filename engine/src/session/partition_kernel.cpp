#include "session/partition_kernel.h"

#include <algorithm>

namespace kiln {
namespace {

class PartitionKernel final : public cpu::Kernel {
 public:
  PartitionKernel(std::string name, std::vector<std::string> inputNames, std::vector<size_t> inputSlots,
                  std::vector<size_t> outputSlots, std::vector<std::string> outputNames, PartitionExecutable& executable,
                  const std::vector<std::string>* deviceOutputs)
      : name_(std::move(name)), inputNames_(std::move(inputNames)), inputSlots_(std::move(inputSlots)),
        outputSlots_(std::move(outputSlots)), outputNames_(std::move(outputNames)), executable_(executable),
        deviceOutputs_(deviceOutputs) {}

  Status compute(cpu::KernelContext& ctx) override {
    std::vector<Tensor> inputs;
    inputs.reserve(inputSlots_.size());
    for (size_t i = 0; i < inputSlots_.size(); ++i) {
      const Tensor* value = ctx.input(inputSlots_[i]);
      if (!value) {
        return Status(StatusCode::FAIL, "partition '" + name_ + "': input '" + inputNames_[i] + "' is missing");
      }
      inputs.push_back(*value);  // shares storage
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, runPartition(inputs));
    for (size_t o = 0; o < outputSlots_.size(); ++o) {
      if (outputSlots_[o] >= outputs.size()) {
        return Status(StatusCode::EP_FAIL, "partition '" + name_ + "' returned " + std::to_string(outputs.size()) +
                                               " outputs, expected more");
      }
      ctx.setOutput(o, outputs[outputSlots_[o]]);
    }
    return Status::ok();
  }

 private:
  Result<std::vector<Tensor>> runPartition(std::span<const Tensor> inputs) {
    if (!deviceOutputs_ || deviceOutputs_->empty()) return executable_.run(inputs);
    std::vector<bool> keep(outputNames_.size(), false);
    bool any = false;
    for (size_t o = 0; o < outputNames_.size(); ++o) {
      keep[o] = std::find(deviceOutputs_->begin(), deviceOutputs_->end(), outputNames_[o]) != deviceOutputs_->end();
      any = any || keep[o];
    }
    return any ? executable_.runKeeping(inputs, keep) : executable_.run(inputs);
  }

  std::string name_;
  std::vector<std::string> inputNames_;  // the compiled partition's inputs, in its order
  std::vector<size_t> inputSlots_;       // per compiled input: index of the node input that carries it
  std::vector<size_t> outputSlots_;      // per node output: index in the compiled partition's outputs
  std::vector<std::string> outputNames_;  // the compiled partition's outputs, in its order
  PartitionExecutable& executable_;
  const std::vector<std::string>* deviceOutputs_;
};

size_t indexOf(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

}  // namespace

Result<std::unique_ptr<cpu::Kernel>> makePartitionKernel(const ir::Node& node, const CompiledPartition& compiled,
                                                         PartitionExecutable& executable,
                                                         const std::vector<std::string>* deviceOutputs) {
  std::vector<size_t> inputSlots, outputSlots;
  for (const auto& name : compiled.inputs) {
    const size_t slot = indexOf(node.inputs, name);
    if (slot == node.inputs.size()) {
      return Status(StatusCode::INVALID_GRAPH, "partition '" + compiled.name + "' reads '" + name +
                                                   "', which is not one of its border inputs");
    }
    inputSlots.push_back(slot);
  }
  for (const auto& name : node.outputs) {
    const size_t slot = indexOf(compiled.outputs, name);
    if (slot == compiled.outputs.size()) {
      return Status(StatusCode::INVALID_GRAPH, "partition '" + compiled.name + "' does not produce '" + name +
                                                   "', which later nodes read");
    }
    outputSlots.push_back(slot);
  }
  return std::unique_ptr<cpu::Kernel>(
      new PartitionKernel(compiled.name, compiled.inputs, std::move(inputSlots), std::move(outputSlots),
                          compiled.outputs, executable, deviceOutputs));
}

}  // namespace kiln
