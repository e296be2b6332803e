// QDQ fusions applied to a Vulkan partition's graph while it compiles, where they are exact (onnxruntime's
// DropQDQNodes): DequantizeLinear -> data movement or MaxPool -> QuantizeLinear with the same per-tensor
// scale and zero point becomes the data movement or MaxPool on the 8-bit tensor itself. The rules are
// ops/qdq_drop.h's, which the graph optimizer also applies to whole models at level `all`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::vk {

// Rewrites every exact chain of ops/qdq_drop.h in `graph`, leaving the values in `keep` (the partition's
// outputs) alone. Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity) always; with `moveBytes` (8-bit
// storage on the device) also the copies, Concat, Gather, Pad and 1-D/2-D MaxPool. `opset` is the model's
// ai.onnx opset (0: unknown). Returns how many chains were rewritten.
int dropQdqAroundDataMovement(ir::Graph& graph, const std::vector<std::string>& keep, bool moveBytes,
                              int64_t opset = 0);

}  // namespace kiln::vk
