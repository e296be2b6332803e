// The optimizer's passes, one per file. Each walks a graph and, recursively, its If/Loop/Scan bodies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/optimizer.h"

namespace kiln::optimizer {

// Results larger than this many elements are left to run time (folding would bloat the model in memory).
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

// Constant nodes → initializers of the graph that holds them; appends one record per folded node.
void foldConstantNodes(ir::Graph& graph, const ir::Model& model, const HostEvaluator& host, const std::string& path,
                       std::vector<FoldedConstantRecord>& folded);

// Evaluates deterministic nodes whose inputs are all constant initializers of their graph (not overridable
// graph inputs), replacing them with initializers. Returns the number of nodes folded.
int64_t foldConstantSubexpressions(ir::Graph& graph, const ir::Model& model, const HostEvaluator& host);

// Removes nodes none of whose outputs is read (by a node, a body or the graph outputs), bodies first, then
// initializers nothing reads (unless they are graph inputs). Returns the number of nodes removed.
int64_t removeDeadNodes(ir::Graph& graph);

// Level `all`: DequantizeLinear -> data movement or MaxPool -> QuantizeLinear chains with the same constant
// per-tensor parameters become the op on the 8-bit tensor (ops/qdq_drop.h), in `graph` and its bodies.
// Returns the number of chains rewritten.
int64_t dropExactQdqPairs(ir::Graph& graph, const ir::Model& model);

// Level `all`: onnxruntime's QDQ node units DequantizeLinear(x), DequantizeLinear(w), [DequantizeLinear(bias)] ->
// Conv -> QuantizeLinear and DequantizeLinear(a), DequantizeLinear(b) -> MatMul -> QuantizeLinear become
// QLinearConv / QLinearMatMul under its selectors' conditions (optimizer/qdq_fusion.cpp), in `graph` and its
// bodies. Returns the number of units fused.
int64_t fuseQdqNodeUnits(ir::Graph& graph);

// True when `name` is an initializer of `graph` that a caller cannot override (not also listed as a graph input).
bool isConstantInitializer(const ir::Graph& graph, const std::string& name);

}  // namespace kiln::optimizer
