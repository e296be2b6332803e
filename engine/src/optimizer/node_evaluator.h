// Runs one node once with the CPU EP's kernel: how the optimizer folds constants with the same arithmetic the
// CPU EP would use at run time.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::optimizer {

// Evaluates `node` (at the model's opset) on `inputs` (nullptr for omitted inputs). Returns one tensor per node
// output (undefined where the node did not produce it); NOT_IMPLEMENTED when the CPU EP has no kernel.
Result<std::vector<Tensor>> evaluateNode(const ir::Node& node, const ir::Model& model,
                                         const std::vector<const Tensor*>& inputs);

}  // namespace kiln::optimizer
