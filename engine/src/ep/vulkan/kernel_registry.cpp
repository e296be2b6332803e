#include "ep/vulkan/kernel_registry.h"

#include <set>

namespace kiln::vk {
namespace {

const std::vector<KernelEntry>& allKernels() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> out;
    registerElementwiseKernels(out);
    registerCompareKernels(out);
    registerFusedKernels(out);
    registerViewKernels(out);
    registerDataMovementKernels(out);
    registerConvKernels(out);
    registerGemmKernels(out);
    registerPoolKernels(out);
    registerResizeKernels(out);
    registerNormalizationKernels(out);
    registerReduceKernels(out);
    registerRecurrentKernels(out);
    registerQuantizationKernels(out);
    registerIntegerKernels(out);
    registerAttentionKernels(out);
    registerMatMulNBitsKernels(out);
    registerGeluKernels(out);
    registerTriluKernels(out);
    registerArgReduceKernels(out);
    registerScatterNDKernels(out);
    registerCumSumKernels(out);
    registerTopKKernels(out);
    registerMultiHeadAttentionKernels(out);
    registerRotaryEmbeddingKernels(out);
    return out;
  }();
  return entries;
}

}  // namespace

const KernelEntry* findKernel(const std::string& domain, const std::string& opType, int64_t opset) {
  const std::string normalized = domain == "ai.onnx" ? "" : domain;
  for (const auto& entry : allKernels()) {
    if (entry.domain != normalized || entry.opType != opType) continue;
    // Other domains (Kiln's own fused nodes, onnxruntime's contrib operators) have one version: any matches.
    if (!entry.domain.empty() || (opset >= entry.sinceVersion && opset <= entry.endVersion)) return &entry;
  }
  return nullptr;
}

std::vector<std::string> kernelOpTypes() {
  std::set<std::string> names;
  for (const auto& entry : allKernels()) {
    // Kiln's fused nodes are internal; a model's contrib operators are named with their domain.
    if (entry.domain.empty()) {
      names.insert(entry.opType);
    } else if (entry.domain != kKilnDomain) {
      names.insert(entry.domain + "." + entry.opType);
    }
  }
  return {names.begin(), names.end()};
}

NodeSupport requireFloat32(const SupportQuery& query, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    if (!query.hasInput(i)) continue;
    const DataType type = query.inputType(i);
    if (type != DataType::FLOAT) {
      return unsupported("input " + std::to_string(i) + " is " +
                         (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                         " (the Vulkan kernel takes float32)");
    }
  }
  for (size_t i = 0; i < query.node.outputs.size(); ++i) {
    if (query.node.outputs[i].empty()) continue;
    const DataType type = query.outputType(i);
    if (type != DataType::FLOAT && type != DataType::UNDEFINED) {
      return unsupported("output " + std::to_string(i) + " is " + dataTypeName(type) + " (the Vulkan kernel writes float32)");
    }
  }
  return supported();
}

NodeSupport requireFloat(const SupportQuery& query, std::initializer_list<size_t> inputs) {
  DataType type = DataType::UNDEFINED;
  for (size_t i : inputs) {
    if (query.hasInput(i)) {
      type = query.inputType(i);
      break;
    }
  }
  if (type == DataType::UNDEFINED && !query.node.outputs.empty()) type = query.outputType(0);
  if (type != DataType::FLOAT16) return requireFloat32(query, inputs);
  if (!query.device.storageBuffer16Bit) {
    return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks (the node runs on the CPU EP)");
  }
  for (size_t i : inputs) {
    if (query.hasInput(i) && query.inputType(i) != DataType::FLOAT16) {
      return unsupported("input " + std::to_string(i) + " is " + dataTypeName(query.inputType(i)) +
                         " beside float16 inputs");
    }
  }
  for (size_t i = 0; i < query.node.outputs.size(); ++i) {
    const DataType out = query.node.outputs[i].empty() ? DataType::UNDEFINED : query.outputType(i);
    if (out != DataType::FLOAT16 && out != DataType::UNDEFINED) {
      return unsupported("output " + std::to_string(i) + " is " + dataTypeName(out) + " (the kernel writes float16)");
    }
  }
  return supported();
}

}  // namespace kiln::vk
