// CumSum (engine/src/ep/vulkan/kernels/cumsum.cpp): one invocation per line along the axis (data viewed as
// [outer, axisDim, inner]) adding in order, as the CPU EP does: EXCLUSIVE writes the sum before the element, REVERSE
// runs from the end. Float tensors accumulate in float32 (SFLOAT storage); INT32 in int; INT64 as word pairs with a
// carry (no shaderInt64 needed).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if INT64
layout(std430, binding = 0) readonly buffer Input { uvec2 x[]; };
layout(std430, binding = 1) writeonly buffer Output { uvec2 o[]; };
#define ACC uvec2
#define ZERO uvec2(0u)
#define LOAD(i) x[i]
#define STORE(i, v) o[i] = v
#elif INT32
layout(std430, binding = 0) readonly buffer Input { int x[]; };
layout(std430, binding = 1) writeonly buffer Output { int o[]; };
#define ACC int
#define ZERO 0
#define LOAD(i) x[i]
#define STORE(i, v) o[i] = v
#else
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT o[]; };
#define ACC float
#define ZERO 0.0
#define LOAD(i) float(x[i])
#define STORE(i, v) o[i] = SFLOAT(v)
#endif
layout(push_constant) uniform Params {
  uint lines;  // outer * inner
  uint rowStride;
  uint axisDim;
  uint inner;
} p;

ACC add(ACC a, ACC b) {
#if INT64
  uint low = a.x + b.x;
  return uvec2(low, a.y + b.y + (low < a.x ? 1u : 0u));
#else
  return a + b;
#endif
}

void main() {
  uint line = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (line >= p.lines) return;
  uint base = (line / p.inner) * p.axisDim * p.inner + line % p.inner;
  ACC acc = ZERO;
  for (uint step = 0u; step < p.axisDim; ++step) {
    uint k = REVERSE != 0 ? p.axisDim - 1u - step : step;
    uint at = base + k * p.inner;
    ACC v = LOAD(at);
#if EXCLUSIVE
    STORE(at, acc);
    acc = add(acc, v);
#else
    acc = add(acc, v);
    STORE(at, acc);
#endif
  }
}
