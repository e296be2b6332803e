#include "optimizer/optimizer.h"

#include "ir/graph_paths.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

Result<OptimizationLevel> parseOptimizationLevel(const std::string& text) {
  if (text == "none") return OptimizationLevel::NONE;
  if (text == "basic") return OptimizationLevel::BASIC;
  if (text == "all") return OptimizationLevel::ALL;
  return Status(StatusCode::INVALID_ARGUMENT,
                "kiln.graph_optimization_level must be none, basic or all, got '" + text + "'");
}

const char* optimizationLevelName(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::NONE: return "none";
    case OptimizationLevel::BASIC: return "basic";
    case OptimizationLevel::ALL: return "all";
  }
  return "?";
}

Result<OptimizationResult> optimizeModel(ir::Model& model, OptimizationLevel level) {
  OptimizationResult result;
  result.level = level;
  if (level == OptimizationLevel::NONE || !model.graph) return result;
  ir::Graph& graph = *model.graph;
  // `all` adds nothing yet: the fusions the Contracts name belong to the EPs' compile step.
  foldConstantNodes(graph, model, ir::kMainGraphPath, result.foldedConstants);
  ++result.passesRun;
  result.nodesFolded = foldConstantSubexpressions(graph, model);
  ++result.passesRun;
  result.nodesRemoved = removeDeadNodes(graph);
  ++result.passesRun;
  return result;
}

}  // namespace kiln::optimizer
