#include "ep/cpu/cpu_execution_provider.h"

#include <cblas.h>

#include "ep/cpu/graph_executor.h"
#include "ep/cpu/kernel_registry.h"
#include "kiln/provider_names.h"

namespace kiln::cpu {

const std::string CpuExecutionProvider::kName = kCpuExecutionProvider;

namespace {

// Whether the registry has a kernel for the node. Bodies of control-flow nodes are not judged here: the partitioner
// asks about their nodes graph by graph, and the session runs them through its executor whatever EP they are on.
NodeSupport supportOf(const ir::Node& node, const ir::Model& model) {
  const int64_t opset = model.opsetVersion(node.domain);
  if (!KernelRegistry::cpu().find(node.domain, node.opType, opset)) {
    return {false, "no CPU kernel for " + node.opType + " at opset " + std::to_string(opset)};
  }
  return {true, ""};
}

class CpuPartition final : public PartitionExecutable {
 public:
  explicit CpuPartition(std::unique_ptr<GraphExecutor> executor) : executor_(std::move(executor)) {}
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override { return executor_->run(inputs); }

 private:
  std::unique_ptr<GraphExecutor> executor_;
};

}  // namespace

CpuExecutionProvider::CpuExecutionProvider() { openblas_set_num_threads(1); }

std::vector<NodeSupport> CpuExecutionProvider::getCapability(const ir::Graph& graph, const ir::Model& model) const {
  std::vector<NodeSupport> result;
  result.reserve(graph.nodes.size());
  for (const auto& node : graph.nodes) result.push_back(supportOf(node, model));
  return result;
}

Result<CompiledPartition> CpuExecutionProvider::compile(const ir::Graph& graph, const PartitionSpec& spec,
                                                        const CompileContext& context) {
  // The CPU EP's compiled form is the partition's own subgraph: nodes, border values and the initializers read.
  auto sub = std::make_shared<ir::Graph>();
  sub->name = spec.name;
  for (const auto& name : spec.inputs) {
    const ir::ValueInfo* info = graph.findValueInfo(name);
    sub->inputs.push_back(info ? *info : ir::ValueInfo{name, ir::ValueKind::TENSOR, DataType::UNDEFINED, std::nullopt});
    sub->inputs.back().name = name;
  }
  for (const auto& name : spec.outputs) {
    const ir::ValueInfo* info = graph.findValueInfo(name);
    sub->outputs.push_back(info ? *info : ir::ValueInfo{name, ir::ValueKind::TENSOR, DataType::UNDEFINED, std::nullopt});
    sub->outputs.back().name = name;
  }
  for (size_t index : spec.nodeIndices) {
    const ir::Node& node = graph.nodes[index];
    sub->nodes.push_back(node);
    for (const auto& in : node.inputs) {
      auto it = graph.initializers.find(in);
      if (it != graph.initializers.end()) sub->initializers[in] = it->second;
    }
    for (const auto& in : graph.implicitInputs(node)) {
      auto it = graph.initializers.find(in);
      if (it != graph.initializers.end()) sub->initializers[in] = it->second;
    }
  }
  // Initializers that are partition inputs are provided by the partition itself.
  std::erase_if(sub->inputs, [&](const ir::ValueInfo& v) { return sub->initializers.count(v.name) != 0; });
  sub->valueInfo = graph.valueInfo;
  CompiledPartition compiled;
  compiled.name = spec.name;
  compiled.executionProvider = kName;
  for (const auto& in : sub->inputs) compiled.inputs.push_back(in.name);
  compiled.outputs = spec.outputs;
  compiled.opsets = context.model.opsetImports;
  compiled.graph = std::move(sub);
  return compiled;
}

Result<std::unique_ptr<PartitionExecutable>> CpuExecutionProvider::load(const CompiledPartition& partition,
                                                                        const CompileContext& context) {
  ExecutorConfig config;
  config.opsets = partition.opsets;
  config.intraOpThreads = context.intraOpThreads;
  config.progress = context.progress;
  KILN_ASSIGN_OR_RETURN(auto executor, GraphExecutor::create(partition.graph, config));
  return std::unique_ptr<PartitionExecutable>(new CpuPartition(std::move(executor)));
}

}  // namespace kiln::cpu
