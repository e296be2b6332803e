#include "ep/cpu/host_evaluator.h"

#include "ep/cpu/kernel.h"
#include "ep/cpu/kernel_registry.h"

namespace kiln::cpu {
namespace {

class KernelHostNode final : public HostNode {
 public:
  explicit KernelHostNode(std::unique_ptr<Kernel> kernel) : kernel_(std::move(kernel)) {}

  Status compute(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) override {
    KernelContext context(inputs, outputs);
    return kernel_->compute(context);
  }

 private:
  std::unique_ptr<Kernel> kernel_;
};

class KernelHostEvaluator final : public HostEvaluator {
 public:
  bool canEvaluate(const std::string& domain, const std::string& opType, int64_t opset) const override {
    return KernelRegistry::cpu().find(domain, opType, opset) != nullptr;
  }

  Result<std::unique_ptr<HostNode>> prepare(const ir::Node& node, int64_t opset,
                                            std::vector<const Tensor*> constantInputs) const override {
    const KernelDef* def = KernelRegistry::cpu().find(node.domain, node.opType, opset);
    if (!def) return Status(StatusCode::NOT_IMPLEMENTED, "no host kernel for " + node.label());
    KernelInfo info{node, opset, std::move(constantInputs), {}, nullptr, {}};
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->factory(info));
    return std::unique_ptr<HostNode>(new KernelHostNode(std::move(kernel)));
  }
};

}  // namespace

std::shared_ptr<const HostEvaluator> hostEvaluator() {
  static const std::shared_ptr<const HostEvaluator> evaluator = std::make_shared<KernelHostEvaluator>();
  return evaluator;
}

}  // namespace kiln::cpu
