#include "ep/cpu/kernel_registry.h"

namespace kiln::cpu {

void KernelRegistry::add(const std::string& opType, int64_t sinceVersion, int64_t endVersion, KernelFactory factory,
                         const std::string& domain) {
  defs_[{domain, opType}].push_back(KernelDef{domain, opType, sinceVersion, endVersion, std::move(factory)});
}

const KernelDef* KernelRegistry::find(const std::string& domain, const std::string& opType, int64_t opset) const {
  auto it = defs_.find({domain == "ai.onnx" ? "" : domain, opType});
  if (it == defs_.end()) return nullptr;
  for (const auto& def : it->second) {
    if (opset >= def.sinceVersion && opset <= def.endVersion) return &def;
  }
  return nullptr;
}

std::vector<std::string> KernelRegistry::opTypes() const {
  std::vector<std::string> names;
  for (const auto& [key, _] : defs_) names.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  return names;
}

const KernelRegistry& KernelRegistry::cpu() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerActivationKernels(r);
    registerMathKernels(r);
    registerConvKernels(r);
    registerPoolKernels(r);
    registerNormalizationKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerIndexingKernels(r);
    registerTensorKernels(r);
    registerControlFlowKernels(r);
    registerRecurrentKernels(r);
    registerMiscKernels(r);
    registerLossKernels(r);
    registerTrainingOptimizerKernels(r);
    registerDftKernels(r);
    registerSignalWindowKernels(r);
    registerGridSampleKernels(r);
    registerRoiAlignKernels(r);
    registerNonMaxSuppressionKernels(r);
    registerQuantizationKernels(r);
    registerEinsumKernels(r);
    registerStringKernels(r);
    registerSequenceKernels(r);
    registerSequenceMapKernels(r);
    registerOptionalKernels(r);
    registerAttentionKernels(r);
    registerRotaryEmbeddingKernels(r);
    registerCenterCropPadKernels(r);
    registerCol2ImKernels(r);
    registerContribNormalizationKernels(r);
    registerContribActivationKernels(r);
    registerGroupQueryAttentionKernels(r);
    registerMultiHeadAttentionKernels(r);
    registerMatMulNBitsKernels(r);
    return r;
  }();
  return registry;
}

}  // namespace kiln::cpu
