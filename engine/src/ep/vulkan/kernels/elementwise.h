// Elementwise ops as GLSL functions, for the fused elementwise kernel (device_fusions.cpp chains them). The op
// table in elementwise.cpp is the one source of the expressions.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace kiln::vk {

struct FusableOp {
  std::string function;  // "float <name>(float v) {...}" or "float <name>(float x, float y) {...}"
  size_t arity = 1;
};

// The GLSL function computing `node` (attributes and constant Clip bounds baked in), or nullopt when the node is
// not a float elementwise op the fused kernel can express.
std::optional<FusableOp> fusableElementwise(const ir::Node& node, int64_t opset, const ir::Graph& graph,
                                            const std::string& name);

// A GLSL float literal that round-trips exactly.
std::string glslFloat(float value);

}  // namespace kiln::vk
