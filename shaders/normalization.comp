// Normalization ops (variants from engine/src/ep/vulkan/kernels/normalization.cpp):
//   BATCH_NORM: elementwise y = x * a[c] + b[c] with c = (i / spatial) % channels. PACKED 1: a and b were folded
//     on the host into one buffer [a..., b...]; PACKED 0: computed here from scale, B, mean and var.
//   otherwise, mean/variance normalization of contiguous rows, one workgroup per row, or one subgroup per row
//     with SUBGROUP_ROWS (no barriers; many medium rows). Two passes in float32: mean, then the variance of
//     x - mean. INSTANCE 1 (InstanceNormalization): scale/B per row, index
//     row % channels; INSTANCE 0 (LayerNormalization): scale/B per element, index i % scaleCount (they
//     broadcast over a trailing part of the row). HAS_BIAS, STATS (write Mean and InvStdDev per row).
//     RMS 1: RMS normalization (no mean subtracted; RMSNormalization and the Simplified layer norms).
//     SKIP 1 (Skip(Simplified)LayerNormalization): the row is x + skip (+ skip bias with SKIP_BIAS), skip repeating
//     every skipRows rows; SUM_OUT also writes that sum. STATS is 1 with SKIP.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#if HAS_SUBGROUP_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };

#if BATCH_NORM
#if PACKED
layout(std430, binding = 1) readonly buffer Folded { float ab[]; };
layout(std430, binding = 2) writeonly buffer Output { SFLOAT y[]; };
#else
layout(std430, binding = 1) readonly buffer Scale { SFLOAT scale[]; };
layout(std430, binding = 2) readonly buffer Bias { SFLOAT bias[]; };
layout(std430, binding = 3) readonly buffer Mean { SFLOAT mean[]; };
layout(std430, binding = 4) readonly buffer Var { SFLOAT var[]; };
layout(std430, binding = 5) writeonly buffer Output { SFLOAT y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;  // invocations per row of workgroups
  uint channels;
  uint spatial;
  float epsilon;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  uint c = (i / p.spatial) % p.channels;
#if PACKED
  y[i] = SFLOAT(float(x[i]) * ab[c] + ab[p.channels + c]);
#else
  float a = float(scale[c]) / sqrt(float(var[c]) + p.epsilon);
  y[i] = SFLOAT(float(x[i]) * a + (float(bias[c]) - float(mean[c]) * a));
#endif
}

#else  // mean/variance normalization of rows

layout(std430, binding = 1) readonly buffer Scale { SFLOAT scale[]; };
layout(std430, binding = 2) readonly buffer Bias { SFLOAT bias[]; };  // bound to Scale when HAS_BIAS is 0
layout(std430, binding = 3) writeonly buffer Output { SFLOAT y[]; };
#if STATS
layout(std430, binding = 4) writeonly buffer MeanOut { float meanOut[]; };
layout(std430, binding = 5) writeonly buffer InvStdOut { float invStdOut[]; };
#endif
#if SKIP
layout(std430, binding = 6) readonly buffer Skip { SFLOAT skip[]; };
layout(std430, binding = 7) readonly buffer SkipBias { SFLOAT skipBias[]; };  // bound to Skip without SKIP_BIAS
layout(std430, binding = 8) writeonly buffer SumOut { SFLOAT sumOut[]; };     // bound to Output without SUM_OUT
#endif
layout(push_constant) uniform Params {
  uint rows;
  uint rowLength;
  uint rowStride;  // workgroups per row of workgroups
  uint channels;   // INSTANCE: scale/B index is row % channels
  uint scaleCount;
  uint biasCount;
  float epsilon;
  uint rowsPerGroup;  // SUBGROUP_ROWS
  uint skipRows;      // SKIP
} p;

// Element i of row `row` (at `base`): x, or with SKIP the residual sum x + skip (+ skip bias).
float rowValue(uint row, uint base, uint i) {
#if SKIP
  float v = float(x[base + i]) + float(skip[(row % p.skipRows) * p.rowLength + i]);
#if SKIP_BIAS
  v += float(skipBias[i]);
#endif
  return v;
#else
  return float(x[base + i]);
#endif
}

#if !SUBGROUP_ROWS
shared float partial[LOCAL_SIZE_X];
#endif

// Sum of `v` over the invocations that share a row (the subgroup with SUBGROUP_ROWS, else the workgroup),
// returned to each of them.
float rowSum(float v) {
#if SUBGROUP_ROWS
  return subgroupAdd(v);
#else
  uint tid = gl_LocalInvocationID.x;
#if HAS_SUBGROUP_ARITHMETIC
  v = subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  uint count = gl_NumSubgroups;
#else
  partial[tid] = v;
  uint count = LOCAL_SIZE_X;
#endif
  barrier();
  for (uint s = count / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
#endif
}

// Normalizes one row from its elements first, first + step, ...
void normalizeRow(uint row, uint first, uint step) {
  uint base = row * p.rowLength;
#if RMS
  float mean = 0.0;
#else
  float sum = 0.0;
  for (uint i = first; i < p.rowLength; i += step) sum += rowValue(row, base, i);
  float mean = rowSum(sum) / float(p.rowLength);
#endif
  float sq = 0.0;
  for (uint i = first; i < p.rowLength; i += step) {
    float d = rowValue(row, base, i) - mean;
    sq += d * d;
  }
  float invStd = 1.0 / sqrt(rowSum(sq) / float(p.rowLength) + p.epsilon);
#if STATS
  if (first == 0) {
    meanOut[row] = mean;
    invStdOut[row] = invStd;
  }
#endif
#if INSTANCE
  uint c = row % p.channels;
  float a = float(scale[c]) * invStd;
  float b = float(bias[c]) - mean * a;
  for (uint i = first; i < p.rowLength; i += step) y[base + i] = SFLOAT(float(x[base + i]) * a + b);
#else
  for (uint i = first; i < p.rowLength; i += step) {
    float value = rowValue(row, base, i);
#if SUM_OUT
    sumOut[base + i] = SFLOAT(value);
#endif
    float v = (value - mean) * invStd * float(scale[i % p.scaleCount]);
#if HAS_BIAS
    v += float(bias[i % p.biasCount]);
#endif
    y[base + i] = SFLOAT(v);
  }
#endif
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
#if SUBGROUP_ROWS
  // Each subgroup takes rows of this workgroup's block in turn (robust to any actual subgroup size).
  uint begin = group * p.rowsPerGroup, end = min(begin + p.rowsPerGroup, p.rows);
  for (uint row = begin + gl_SubgroupID; row < end; row += gl_NumSubgroups) {
    normalizeRow(row, gl_SubgroupInvocationID, gl_SubgroupSize);
  }
#else
  if (group >= p.rows) return;  // the whole workgroup leaves together
  normalizeRow(group, gl_LocalInvocationID.x, LOCAL_SIZE_X);
#endif
}
#endif
