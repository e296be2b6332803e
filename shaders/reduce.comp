// Reduce* ops: y[o] = FINISH(fold of ACCUMULATE over the reduced elements of output o). The host merges the
// input's dims into at most 4 kept groups (which index the output) and 4 reduced groups, each with its input
// stride, so any set of axes reduces in one dispatch. The op is data from engine/src/ep/vulkan/kernels/reduce.cpp:
//   INIT, ACCUMULATE(a, v), FINISH(a) expressions; COMBINE_ADD / COMBINE_MUL / COMBINE_MAX / COMBINE_MIN (how two
//   partial results merge); LOG_SUM_EXP (a first pass finds the maximum, subtracted before exp).
// MODE 0: one invocation per output looping over its elements (short reductions, many outputs); 1: one
// workgroup per output, its invocations striding over the elements (few long reductions); 2 (needs subgroup
// arithmetic): one subgroup per output, no barriers (many medium reductions).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#if HAS_SUBGROUP_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint outCount;
  uint reduceCount;  // reduced elements per output
  uint rowStride;    // workgroups per row of workgroups (MODE 1, 2) or invocations per row (MODE 0)
  uint keptRank;
  uint keptDims[4];
  uint keptStrides[4];
  uint redRank;
  uint redDims[4];
  uint redStrides[4];
  uint outputsPerGroup;  // MODE 2
} p;

#define kInf uintBitsToFloat(0x7f800000u)

#define KIND_ADD 0
#define KIND_MUL 1
#define KIND_MAX 2
#define KIND_MIN 3
#if COMBINE_MUL
#define KIND KIND_MUL
#elif COMBINE_MAX
#define KIND KIND_MAX
#elif COMBINE_MIN
#define KIND KIND_MIN
#else
#define KIND KIND_ADD
#endif

// NaN-propagating max/min, as the CPU reference does.
float maxNan(float a, float v) { return (v > a || isnan(v)) ? v : a; }
float minNan(float a, float v) { return (v < a || isnan(v)) ? v : a; }

float combine(float a, float b, int kind) {
  if (kind == KIND_MUL) return a * b;
  if (kind == KIND_MAX) return maxNan(a, b);
  if (kind == KIND_MIN) return minNan(a, b);
  return a + b;
}

#if HAS_SUBGROUP_ARITHMETIC
float subgroupReduce(float v, int kind) {
  if (kind == KIND_ADD) return subgroupAdd(v);
  if (kind == KIND_MUL) return subgroupMul(v);
  bool nan = subgroupAny(isnan(v));  // subgroupMax/Min leave NaN undefined
  v = kind == KIND_MAX ? subgroupMax(v) : subgroupMin(v);
  return nan ? kInf - kInf : v;
}
#endif

uint keptOffset(uint o) {
  uint offset = 0;
  for (int d = int(p.keptRank) - 1; d >= 0; --d) {
    offset += (o % p.keptDims[d]) * p.keptStrides[d];
    o /= p.keptDims[d];
  }
  return offset;
}

uint reducedOffset(uint r) {
  if (p.redRank == 1) return r * p.redStrides[0];
  uint offset = 0;
  for (int d = int(p.redRank) - 1; d >= 0; --d) {
    offset += (r % p.redDims[d]) * p.redStrides[d];
    r /= p.redDims[d];
  }
  return offset;
}

#if MODE == 1
shared float partial[LOCAL_SIZE_X];

// The combination of every invocation's `v` over the workgroup, returned to all invocations. Subgroup
// arithmetic first where the device has it, then a shared-memory tree over the per-subgroup results.
float groupReduce(float v, int kind) {
  uint tid = gl_LocalInvocationID.x;
#if HAS_SUBGROUP_ARITHMETIC
  v = subgroupReduce(v, kind);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  uint count = gl_NumSubgroups;
#else
  partial[tid] = v;
  uint count = LOCAL_SIZE_X;
#endif
  barrier();
  for (uint s = count / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] = combine(partial[tid], partial[tid + s], kind);
    barrier();
  }
  float result = partial[0];
  barrier();  // `partial` is reused by the next call
  return result;
}
#endif

// `v` combined across the invocations that share one output (none in MODE 0).
float across(float v, int kind) {
#if MODE == 1
  return groupReduce(v, kind);
#elif MODE == 2
  return subgroupReduce(v, kind);
#else
  return v;
#endif
}

// Output o from the reduced elements first, first + step, ... (every sharing invocation gets the result).
float reduceOne(uint o, uint first, uint step) {
  uint base = keptOffset(o);
  float shift = 0.0;
#if LOG_SUM_EXP
  float m = -kInf;
  for (uint r = first; r < p.reduceCount; r += step) m = max(m, float(x[base + reducedOffset(r)]));
  m = across(m, KIND_MAX);
  shift = (isinf(m) || isnan(m)) ? 0.0 : m;
#endif
  float a = INIT;
  for (uint r = first; r < p.reduceCount; r += step) {
    float v = float(x[base + reducedOffset(r)]);
    a = ACCUMULATE(a, v);
  }
  a = across(a, KIND);
  float count = float(p.reduceCount);
  return FINISH(a);
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
#if MODE == 1
  if (group >= p.outCount) return;  // the whole workgroup leaves together
  float result = reduceOne(group, gl_LocalInvocationID.x, LOCAL_SIZE_X);
  if (gl_LocalInvocationID.x == 0) y[group] = SFLOAT(result);
#elif MODE == 2
  // Each subgroup takes outputs of this workgroup's block in turn (robust to any actual subgroup size).
  uint begin = group * p.outputsPerGroup, end = min(begin + p.outputsPerGroup, p.outCount);
  for (uint o = begin + gl_SubgroupID; o < end; o += gl_NumSubgroups) {
    float result = reduceOne(o, gl_SubgroupInvocationID, gl_SubgroupSize);
    if (subgroupElect()) y[o] = SFLOAT(result);
  }
#else
  uint o = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (o >= p.outCount) return;
  y[o] = SFLOAT(reduceOne(o, 0, 1));
#endif
}
