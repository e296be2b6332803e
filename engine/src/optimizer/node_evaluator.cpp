#include "optimizer/node_evaluator.h"

#include <exception>
#include <memory>

namespace kiln::optimizer {

Result<std::vector<Tensor>> evaluateNode(const ir::Node& node, const ir::Model& model,
                                         const std::vector<const Tensor*>& inputs, const HostEvaluator& host) {
  const int64_t opset = model.opsetVersion(node.domain);
  if (!host.canEvaluate(node.domain, node.opType, opset)) {
    return Status(StatusCode::NOT_IMPLEMENTED, "no CPU kernel for " + node.label());
  }
  try {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<HostNode> prepared, host.prepare(node, opset, inputs));
    std::vector<Tensor> outputs(node.outputs.size());
    KILN_RETURN_IF_ERROR(prepared->compute(inputs, outputs));
    return outputs;
  } catch (const std::exception& e) {
    return Status(StatusCode::RUNTIME_EXCEPTION, node.label() + ": " + e.what());
  }
}

}  // namespace kiln::optimizer
