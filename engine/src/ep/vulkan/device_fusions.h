// Device fusions applied to a Vulkan partition's graph while it compiles (Contracts: they belong to the compiled
// artifact and run whatever kiln.graph_optimization_level says).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ops/batch_norm_fold.h"

namespace kiln::vk {

struct FusionStats {
  int batchNormsFolded = 0;
  int activationsFused = 0;
  int elementwiseChains = 0;       // FusedElementwise nodes created
  int elementwiseNodesFused = 0;   // nodes they replaced
};

// Folds BatchNormalization (inference) into the Conv/ConvTranspose that feeds it when the Conv's output has no
// other reader and every parameter is an initializer: new weights and bias, one node fewer. Then fuses a
// following Relu/Clip/LeakyRelu/HardSigmoid/HardSwish/Sigmoid into the Conv (kiln_activation attributes) under the same
// conditions. `keep` lists values that must stay visible (the partition's outputs).

FusionStats applyDeviceFusions(ir::Graph& graph, const std::vector<std::string>& keep, bool fuseActivations);

// Replaces chains of float32 or float16 elementwise ops that read one tensor (plus scalar constants) by one FusedElementwise
// node (domain "kiln"): x+3 → Clip(0,6) → ·x → /6 (HardSwish as exported) becomes one dispatch. Values in `keep`
// and values read by more than one node stay materialized; only nodes with onDevice[i] take part (host shape
// arithmetic must keep producing host values). `opset` is the model's ai.onnx opset.
void fuseElementwiseChains(ir::Graph& graph, const std::vector<std::string>& keep, int64_t opset,
                           const std::vector<bool>& onDevice, FusionStats& stats);

}  // namespace kiln::vk
