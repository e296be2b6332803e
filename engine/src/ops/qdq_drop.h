// The exact QDQ drops both execution providers rely on (onnxruntime's DropQDQNodes selectors and its QDQ
// propagation): DequantizeLinear(q; s, z) -> op -> QuantizeLinear(s, z) with the same constant per-tensor
// scale and zero point becomes op on the 8-bit tensor q itself, when op only moves or selects elements.
// Exact: for a normal scale s with |255 s| finite, quantizing a dequantized value k * s gives back k (two
// roundings of relative error 2^-24 stay within 255 * 2^-23 < 0.5 of k), so the pair is the identity on 8-bit
// values. The graph optimizer runs it over whole models (level `all`); the Vulkan EP over each partition it
// compiles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::ops {

struct QdqDropPolicy {
  // Values that must keep their name and float type (a partition's outputs); graph outputs always do.
  std::vector<std::string> keep;
  // Ops that copy elements (Transpose, Slice, Expand, Tile, DepthToSpace, SpaceToDepth, Concat, Gather,
  // GatherElements, Pad, nearest Resize, 1-D/2-D MaxPool) may run on 8-bit data; without it only views
  // (Reshape, Flatten, Squeeze, Unsqueeze, Identity) do.
  bool moveBytes = true;
  // The model's ai.onnx opset; when > 0, ops whose 8-bit form ONNX allows only from a later opset (MaxPool
  // 12, Pad 11) are left alone, so a rewritten graph stays valid ONNX. 0: not checked (Pad is then left
  // alone: before opset 11 its pad value is a float attribute).
  int64_t opset = 0;
  // The graphs around `graph` when it is a body, innermost first: the types and constant parameters it reads
  // from outer scopes are theirs.
  std::vector<const ir::Graph*> enclosing;
};

// Rewrites every exact chain of `graph` (not its bodies): each float input of op that a DequantizeLinear
// writes (input 0; every input of Concat) reads the 8-bit tensor instead, op writes the QuantizeLinear's
// output, and the QuantizeLinear goes, as does each DequantizeLinear nothing else reads (one that other
// nodes, a body, policy.keep or the graph outputs read stays for them). Left alone: other scales or zero
// points, per-axis or blocked parameters, parameters that are not constant initializers, a negative scale
// around MaxPool, a constant Pad whose value is not 0 (a zero pad becomes the zero point), and a chain whose
// op output is read by anything but the QuantizeLinear (another node, a body, policy.keep, the graph
// outputs). Returns the chains rewritten.
int64_t dropExactQdqPairs(ir::Graph& graph, const QdqDropPolicy& policy);

}  // namespace kiln::ops
