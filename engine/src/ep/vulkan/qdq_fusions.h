// QDQ fusions applied to a Vulkan partition's graph while it compiles, where they are exact (onnxruntime's
// DropQDQNodes): DequantizeLinear -> data movement or MaxPool -> QuantizeLinear with the same per-tensor
// scale and zero point becomes the data movement or MaxPool on the 8-bit tensor itself.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::vk {

// Rewrites every DequantizeLinear(q; s, z) -> op -> QuantizeLinear(s, z) chain, where op moves data (Reshape,
// Flatten, Squeeze, Unsqueeze, Identity; with `moveBytes`, i.e. 8-bit storage on the device, also Transpose,
// Slice, Expand, Tile, DepthToSpace, SpaceToDepth, and a 1-D/2-D MaxPool when s > 0: max commutes with a
// non-decreasing dequantization), s and z are equal constants and no intermediate value is
// read elsewhere or listed in `keep`, into op reading q and writing the QuantizeLinear's output. Exact: for a
// normal scale s with |255 s| finite, quantizing a dequantized value k * s gives back k (two roundings of
// relative error 2^-24 stay within 255 * 2^-23 < 0.5 of k). Returns how many chains were rewritten.
int dropQdqAroundDataMovement(ir::Graph& graph, const std::vector<std::string>& keep, bool moveBytes);

}  // namespace kiln::vk
