// Softmax / LogSoftmax over n elements of stride `inner`: the input is viewed as [outer, n, inner] and each of
// the outer * inner columns is normalized on its own, in float32 with the column maximum subtracted before exp.
// MODE 0: one invocation per column (consecutive invocations read consecutive addresses when inner > 1);
// with inner == 1, MODE 1: one workgroup per row (few long rows), MODE 2 (needs subgroup arithmetic): one
// subgroup per row, no barriers (many medium rows). LOG: LogSoftmax.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#if HAS_SUBGROUP_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint columns;    // outer * inner
  uint n;          // length of the normalized axis
  uint inner;      // stride between its elements
  uint rowStride;  // workgroups per row of workgroups (MODE 1, 2) or invocations per row (MODE 0)
  uint rowsPerGroup;  // MODE 2
} p;

#define kInf uintBitsToFloat(0x7f800000u)

#if MODE == 1
shared float partial[LOCAL_SIZE_X];

// Workgroup-wide max (isMax) or sum of `v`, returned to every invocation.
float groupReduce(float v, bool isMax) {
  uint tid = gl_LocalInvocationID.x;
#if HAS_SUBGROUP_ARITHMETIC
  v = isMax ? subgroupMax(v) : subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  uint count = gl_NumSubgroups;
#else
  partial[tid] = v;
  uint count = LOCAL_SIZE_X;
#endif
  barrier();
  for (uint s = count / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] = isMax ? max(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}
#endif

// Max (isMax) or sum of `v` across the invocations that share one row (none in MODE 0).
float across(float v, bool isMax) {
#if MODE == 1
  return groupReduce(v, isMax);
#elif MODE == 2
  return isMax ? subgroupMax(v) : subgroupAdd(v);
#else
  return v;
#endif
}

// Normalizes one column from its elements first, first + step, ...
void normalizeOne(uint column, uint first, uint step) {
  uint outer = column / p.inner;
  uint base = outer * p.n * p.inner + (column - outer * p.inner);
  float m = -kInf;
  for (uint k = first; k < p.n; k += step) m = max(m, float(x[base + k * p.inner]));
  m = across(m, true);
  float sum = 0.0;
  for (uint k = first; k < p.n; k += step) sum += exp(float(x[base + k * p.inner]) - m);
  sum = across(sum, false);
#if LOG
  float shift = m + log(sum);
  for (uint k = first; k < p.n; k += step) y[base + k * p.inner] = SFLOAT(float(x[base + k * p.inner]) - shift);
#else
  float scale = 1.0 / sum;
  for (uint k = first; k < p.n; k += step) y[base + k * p.inner] = SFLOAT(exp(float(x[base + k * p.inner]) - m) * scale);
#endif
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
#if MODE == 1
  if (group >= p.columns) return;  // the whole workgroup leaves together
  normalizeOne(group, gl_LocalInvocationID.x, LOCAL_SIZE_X);
#elif MODE == 2
  // Each subgroup takes rows of this workgroup's block in turn (robust to any actual subgroup size).
  uint begin = group * p.rowsPerGroup, end = min(begin + p.rowsPerGroup, p.columns);
  for (uint row = begin + gl_SubgroupID; row < end; row += gl_NumSubgroups) {
    normalizeOne(row, gl_SubgroupInvocationID, gl_SubgroupSize);
  }
#else
  uint column = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (column >= p.columns) return;
  normalizeOne(column, 0, 1);
#endif
}
