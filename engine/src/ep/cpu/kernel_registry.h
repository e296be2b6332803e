// The CPU EP's kernels by (domain, op type, opset range).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"

namespace kiln::cpu {

struct KernelDef {
  std::string domain;  // "" = ai.onnx
  std::string opType;
  int64_t sinceVersion = 1;
  int64_t endVersion = 1 << 30;  // inclusive
  KernelFactory factory;
};

class KernelRegistry {
 public:
  // Registers a kernel for opsets [sinceVersion, endVersion].
  void add(const std::string& opType, int64_t sinceVersion, int64_t endVersion, KernelFactory factory,
           const std::string& domain = "");
  // The kernel for `opType` at the model's opset, or nullptr.
  const KernelDef* find(const std::string& domain, const std::string& opType, int64_t opset) const;
  // All registered op types (for reports).
  std::vector<std::string> opTypes() const;

  // The registry with every CPU kernel (built once, on first use).
  static const KernelRegistry& cpu();

 private:
  std::map<std::pair<std::string, std::string>, std::vector<KernelDef>> defs_;
};

constexpr int64_t kAnyOpset = 1 << 30;

// One registration function per kernel family (kernels/*.cpp); registry.cpp calls them all.
void registerElementwiseKernels(KernelRegistry& registry);
void registerActivationKernels(KernelRegistry& registry);
void registerMathKernels(KernelRegistry& registry);        // Gemm, MatMul, Einsum-free linear algebra
void registerConvKernels(KernelRegistry& registry);        // Conv, ConvTranspose
void registerPoolKernels(KernelRegistry& registry);
void registerNormalizationKernels(KernelRegistry& registry);
void registerReductionKernels(KernelRegistry& registry);   // Reduce*, ArgMax/ArgMin, Softmax family
void registerShapeKernels(KernelRegistry& registry);       // Reshape, Shape, Transpose, Concat, Split, ...
void registerIndexingKernels(KernelRegistry& registry);    // Gather*, Scatter*, Slice, Where, ...
void registerTensorKernels(KernelRegistry& registry);      // Cast, Constant*, Range, Pad, Tile, Expand, Resize...
void registerControlFlowKernels(KernelRegistry& registry); // If, Loop, Scan
void registerRecurrentKernels(KernelRegistry& registry);   // LSTM, GRU, RNN
void registerMiscKernels(KernelRegistry& registry);        // anything else
void registerLossKernels(KernelRegistry& registry);        // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void registerTrainingOptimizerKernels(KernelRegistry& registry);  // ai.onnx.preview.training Adagrad, Adam, Momentum
void registerDftKernels(KernelRegistry& registry);           // DFT, STFT
void registerSignalWindowKernels(KernelRegistry& registry);  // Hann/Hamming/BlackmanWindow, MelWeightMatrix
void registerGridSampleKernels(KernelRegistry& registry);
void registerRoiAlignKernels(KernelRegistry& registry);
void registerNonMaxSuppressionKernels(KernelRegistry& registry);
void registerQuantizationKernels(KernelRegistry& registry);  // (De)QuantizeLinear, DynamicQuantizeLinear, QLinear*
void registerEinsumKernels(KernelRegistry& registry);
void registerStringKernels(KernelRegistry& registry);      // StringNormalizer, TfIdfVectorizer
void registerSequenceKernels(KernelRegistry& registry);     // SequenceConstruct/Empty/At/Insert/Erase/Length, ...
void registerSequenceMapKernels(KernelRegistry& registry);  // SequenceMap
void registerOptionalKernels(KernelRegistry& registry);     // Optional, OptionalHasElement, OptionalGetElement
void registerAttentionKernels(KernelRegistry& registry);        // Attention (opset 23)
void registerRotaryEmbeddingKernels(KernelRegistry& registry);  // RotaryEmbedding (opset 23)
void registerCenterCropPadKernels(KernelRegistry& registry);    // CenterCropPad (opset 18)
void registerCol2ImKernels(KernelRegistry& registry);           // Col2Im (opset 18)
// onnxruntime's contrib operators (com.microsoft, and the few it registers in ai.onnx) that exported transformers use.
void registerContribNormalizationKernels(KernelRegistry& registry);  // Skip(Simplified)LayerNormalization, ...
void registerContribActivationKernels(KernelRegistry& registry);     // FastGelu, BiasGelu, QuickGelu, Gelu
void registerGroupQueryAttentionKernels(KernelRegistry& registry);   // GroupQueryAttention
void registerMultiHeadAttentionKernels(KernelRegistry& registry);    // MultiHeadAttention
void registerMatMulNBitsKernels(KernelRegistry& registry);           // MatMulNBits

}  // namespace kiln::cpu
