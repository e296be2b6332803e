#include "optimizer/node_evaluator.h"

#include <exception>

#include "ep/cpu/kernel_registry.h"

namespace kiln::optimizer {

Result<std::vector<Tensor>> evaluateNode(const ir::Node& node, const ir::Model& model,
                                         const std::vector<const Tensor*>& inputs) {
  const int64_t opset = model.opsetVersion(node.domain);
  const cpu::KernelDef* def = cpu::KernelRegistry::cpu().find(node.domain, node.opType, opset);
  if (!def) return Status(StatusCode::NOT_IMPLEMENTED, "no CPU kernel for " + node.label());
  try {
    // Every input is constant here, so the kernel may also precompute from them (as it does for initializers).
    cpu::KernelInfo info{node, opset, inputs, {}, nullptr, {}};
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<cpu::Kernel> kernel, def->factory(info));
    std::vector<Tensor> outputs(node.outputs.size());
    cpu::KernelContext context(inputs, outputs);
    KILN_RETURN_IF_ERROR(kernel->compute(context));
    return outputs;
  } catch (const std::exception& e) {
    return Status(StatusCode::RUNTIME_EXCEPTION, node.label() + ": " + e.what());
  }
}

}  // namespace kiln::optimizer
