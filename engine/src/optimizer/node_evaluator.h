// Runs one node once on the host evaluator the optimizer was given (the CPU EP's kernels, handed down by the
// session): how constants fold with the same arithmetic the CPU EP would use at run time.
#pragma once

#include <vector>

#include "ep/host_evaluator.h"
#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::optimizer {

// Evaluates `node` (at the model's opset) on `inputs` (nullptr for omitted inputs; all constant, so the kernel
// may precompute from them). Returns one tensor per node output (undefined where the node did not produce it);
// NOT_IMPLEMENTED when `host` cannot evaluate it.
Result<std::vector<Tensor>> evaluateNode(const ir::Node& node, const ir::Model& model,
                                         const std::vector<const Tensor*>& inputs, const HostEvaluator& host);

}  // namespace kiln::optimizer
