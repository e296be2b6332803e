// Device fusions applied to a Vulkan partition's graph while it compiles (Contracts: they belong to the compiled
// artifact and run whatever kiln.graph_optimization_level says).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::vk {

struct FusionStats {
  int batchNormsFolded = 0;
  int activationsFused = 0;
};

// Folds BatchNormalization (inference) into the Conv/ConvTranspose that feeds it when the Conv's output has no
// other reader and every parameter is an initializer: new weights and bias, one node fewer. Then fuses a
// following Relu/Clip/LeakyRelu/HardSigmoid/Sigmoid into the Conv (kiln_activation attributes) under the same
// conditions. `keep` lists values that must stay visible (the partition's outputs).
FusionStats applyDeviceFusions(ir::Graph& graph, const std::vector<std::string>& keep, bool fuseActivations);

}  // namespace kiln::vk
