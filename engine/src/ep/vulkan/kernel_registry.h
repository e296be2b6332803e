// The Vulkan kernel registry: every op the Vulkan EP implements, one register function per op family
// (kernels/<family>.cpp), collected once.
#pragma once

#include <string>
#include <vector>

#include "ep/vulkan/vk_kernel.h"

namespace kiln::vk {

// Each kernels/<family>.cpp defines one of these and appends its entries.
void registerElementwiseKernels(std::vector<KernelEntry>& out);
void registerCompareKernels(std::vector<KernelEntry>& out);
void registerFusedKernels(std::vector<KernelEntry>& out);
void registerViewKernels(std::vector<KernelEntry>& out);
void registerDataMovementKernels(std::vector<KernelEntry>& out);
void registerConvKernels(std::vector<KernelEntry>& out);
void registerGemmKernels(std::vector<KernelEntry>& out);
void registerPoolKernels(std::vector<KernelEntry>& out);
void registerResizeKernels(std::vector<KernelEntry>& out);
void registerNormalizationKernels(std::vector<KernelEntry>& out);
void registerReduceKernels(std::vector<KernelEntry>& out);
void registerRecurrentKernels(std::vector<KernelEntry>& out);
void registerQuantizationKernels(std::vector<KernelEntry>& out);
void registerIntegerKernels(std::vector<KernelEntry>& out);
void registerAttentionKernels(std::vector<KernelEntry>& out);  // com.microsoft GroupQueryAttention
void registerMatMulNBitsKernels(std::vector<KernelEntry>& out);  // com.microsoft MatMulNBits
void registerTriluKernels(std::vector<KernelEntry>& out);  // Trilu
void registerArgReduceKernels(std::vector<KernelEntry>& out);  // ArgMax, ArgMin
void registerScatterNDKernels(std::vector<KernelEntry>& out);  // ScatterND
void registerCumSumKernels(std::vector<KernelEntry>& out);  // CumSum
void registerTopKKernels(std::vector<KernelEntry>& out);  // TopK
void registerMultiHeadAttentionKernels(std::vector<KernelEntry>& out);  // com.microsoft MultiHeadAttention
void registerGeluKernels(std::vector<KernelEntry>& out);  // Gelu-20 and the com.microsoft Gelus
void registerRotaryEmbeddingKernels(std::vector<KernelEntry>& out);  // RotaryEmbedding-23 and com.microsoft

// The entry for (domain, opType, opset), or nullptr.
const KernelEntry* findKernel(const std::string& domain, const std::string& opType, int64_t opset);
// Every op type with a Vulkan kernel (for docs and `kiln devices`), contrib operators as com.microsoft.<op>.
std::vector<std::string> kernelOpTypes();

}  // namespace kiln::vk
