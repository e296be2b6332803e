// Float16 on the CPU EP the way onnxruntime's CPU EP runs it (its InsertCastTransformer): nodes
// whose CPU kernels would widen every input to float and round every output back compute in float32 instead, and a
// chain of such nodes keeps its values in float32, with Casts only at the chain's edges. Values inside a chain are
// then more precise than float16 storage (onnxruntime's results are what Kiln is checked against), each node saves
// two conversion passes, and float32-only plans (the Conv + Relu epilogue, elementwise_epilogue.h) apply.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace kiln::cpu {

struct Float16ComputeStats {
  int64_t nodes = 0;         // nodes that now compute in float32
  int64_t initializers = 0;  // float16 initializers widened to float32 (in place or as a copy)
  int64_t casts = 0;         // Cast nodes added at the chains' edges
};

// Rewrites `graph`, a top-level graph (every value it reads is its input, its initializer or its node's output), so
// that float16 values produced and read by type-generic ops (an allow-list: Conv, Relu, Add, MaxPool,
// Resize, Concat, Reshape, ...) are float32. Graph inputs and outputs, values a subgraph body reads, initializers
// fed as inputs, and every other node (Casts of the model included) keep their types and names; Casts join the two.
// Subgraph bodies are left as they are, and so is bfloat16 (float16_compute.cpp says why).
Float16ComputeStats computeFloat16InFloat32(ir::Graph& graph);

// Whether computeFloat16InFloat32 would change `graph` (some node computes in float32), without copying it.
bool hasFloat16ToCompute(const ir::Graph& graph);

}  // namespace kiln::cpu
