#include "optimizer/optimizer.h"

#include "ir/graph_paths.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

const char* optimizationLevelName(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::NONE: return "none";
    case OptimizationLevel::BASIC: return "basic";
    case OptimizationLevel::ALL: return "all";
  }
  return "basic";
}

Result<OptimizationResult> optimizeModel(ir::Model& model, OptimizationLevel level, const HostEvaluator& host) {
  OptimizationResult result;
  result.level = level;
  if (level == OptimizationLevel::NONE || !model.graph) return result;
  ir::Graph& graph = *model.graph;
  // Device fusions belong to the EPs' compile step. `all` adds the exact QDQ drops and onnxruntime's QDQ unit
  // fusions (integer kernels every EP runs, computing what onnxruntime computes).
  foldConstantNodes(graph, model, host, ir::kMainGraphPath, result.foldedConstants);
  ++result.passesRun;
  if (level == OptimizationLevel::ALL) {
    // Before folding, which would turn the weights' DequantizeLinear nodes into float initializers.
    result.qdqUnitsFused = fuseQdqNodeUnits(graph);
    ++result.passesRun;
  }
  result.nodesFolded = foldConstantSubexpressions(graph, model, host);
  ++result.passesRun;
  if (level == OptimizationLevel::ALL) {
    result.qdqPairsDropped = dropExactQdqPairs(graph, model);
    ++result.passesRun;
  }
  result.nodesRemoved = removeDeadNodes(graph);
  ++result.passesRun;
  return result;
}

}  // namespace kiln::optimizer
