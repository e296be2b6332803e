// Generic graph optimization, run on the whole model (subgraph bodies included) before partitioning, at
// kiln.graph_optimization_level (engine/ARCHITECTURE.md, Contracts: "Where optimization happens"). Device fusions are not
// here: they run inside an EP's compile of a partition, whatever the level.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ep/host_evaluator.h"
#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::optimizer {

// The passes to run. Session configuration parses kiln.graph_optimization_level (the public
// GraphOptimizationLevel) and hands the optimizer this enum: the optimizer reads no config.
enum class OptimizationLevel { NONE, BASIC, ALL };

// "none", "basic" or "all": the names kiln.graph_optimization_level accepts and reports print.
const char* optimizationLevelName(OptimizationLevel level);

// A Constant node turned into an initializer of its graph.
struct FoldedConstantRecord {
  const ir::Graph* graph = nullptr;  // the graph that now holds the initializer (identifies it for the report)
  std::string graphPath;             // its path when the pass ran ("main", "main/If_3.then_branch")
  std::string node;                  // the Constant node's label
  std::string output;                // the initializer's name
};

struct OptimizationResult {
  OptimizationLevel level = OptimizationLevel::BASIC;
  int passesRun = 0;         // WorkCounters::optimizer_passes_run: one per pass over the model
  int64_t nodesFolded = 0;   // non-Constant nodes evaluated once by constant folding
  int64_t nodesRemoved = 0;  // dead nodes removed
  int64_t qdqPairsDropped = 0;  // level `all`: QDQ pairs dropped around data movement (ops/qdq_drop.h)
  int64_t qdqUnitsFused = 0;    // level `all`: QDQ units fused into QLinearConv / QLinearMatMul
  std::vector<FoldedConstantRecord> foldedConstants;
};

// Runs the passes of `level` over `model` in place. `basic`: Constant nodes become initializers, deterministic
// nodes whose inputs are all constant are evaluated by `host` (the session hands it the CPU EP's kernels: the
// arithmetic the CPU EP would run), nodes whose outputs nothing
// reads are removed. `all` adds, before the folding, the fusion of QDQ units around Conv and MatMul into
// QLinearConv / QLinearMatMul (integer accumulation, one requantization: onnxruntime's result, not the float
// path's; optimizer/qdq_fusion.cpp), and before the removal the exact QDQ drops around data movement
// (ops/qdq_drop.h), as onnxruntime's extended level does. `none` changes nothing.
Result<OptimizationResult> optimizeModel(ir::Model& model, OptimizationLevel level, const HostEvaluator& host);

}  // namespace kiln::optimizer
