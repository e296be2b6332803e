// com.microsoft MultiHeadAttention (engine/src/ep/vulkan/kernels/multi_head_attention.cpp), two kinds of dispatch:
//   GATHER: one invocation per element of a [batch, heads, total, size] key or value block (present's layout): the
//     past rows first, then this step's rows of `now` ([batch, kv_seq, heads * size], or [batch, heads, kv_seq, size]
//     with nowBnsh) plus the bias slice. BLOCK_FLOAT writes the block as float32: half models keep biased keys and
//     values unrounded for the scores, as onnxruntime does, while present stores halves.
//   otherwise (attention): one workgroup per (batch, head, query position): the query row (+ bias) in shared memory,
//     scale * q.k over every key into a scratch row, then the masks and attention_bias added as the CPU kernel does
//     (a masked key takes mask_filter_value, not -inf), max and sum reduced over the workgroup, values weighed.
// MASK: 0 none, 1 key lengths [batch], 2 [batch, total], 3 [batch, seq, total] (int32). Math in float32; tensors in
// SFLOAT storage (storage.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;

#if GATHER
layout(std430, binding = 0) readonly buffer Now { SFLOAT now[]; };
layout(std430, binding = 1) readonly buffer Past { SFLOAT past[]; };  // bound to Now without a past
layout(std430, binding = 2) readonly buffer Bias { SFLOAT bias[]; };  // bound to Now without a bias
#if BLOCK_FLOAT
layout(std430, binding = 3) writeonly buffer Block { float block[]; };
#else
layout(std430, binding = 3) writeonly buffer Block { SFLOAT block[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint heads;
  uint total;
  uint pastLen;
  uint kvSeq;
  uint size;
  uint hasBias;
  uint biasOffset;
  uint nowBnsh;
} p;

void main() {
  uint idx = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (idx >= p.count) return;
  uint i = idx % p.size;
  uint t = (idx / p.size) % p.total;
  uint bh = idx / (p.size * p.total);
  uint h = bh % p.heads, b = bh / p.heads;
  float v;
  if (t < p.pastLen) {
    v = float(past[(bh * p.pastLen + t) * p.size + i]);
  } else {
    uint row = p.nowBnsh != 0u ? bh * p.kvSeq + (t - p.pastLen) : (b * p.kvSeq + (t - p.pastLen)) * p.heads + h;
    v = float(now[row * p.size + i]);
    if (p.hasBias != 0u) v += float(bias[p.biasOffset + h * p.size + i]);
  }
#if BLOCK_FLOAT
  block[idx] = v;
#else
  block[idx] = SFLOAT(v);
#endif
}
#else
layout(std430, binding = 0) readonly buffer Query { SFLOAT q[]; };
#if KV_FLOAT  // the float32 blocks of a half model
layout(std430, binding = 1) readonly buffer Keys { float keys[]; };      // [batch, heads, total, head]
layout(std430, binding = 2) readonly buffer Values { float values[]; };  // [batch, heads, total, vHead]
#else
layout(std430, binding = 1) readonly buffer Keys { SFLOAT keys[]; };
layout(std430, binding = 2) readonly buffer Values { SFLOAT values[]; };
#endif
layout(std430, binding = 3) readonly buffer Bias { SFLOAT bias[]; };      // bound to Query without a bias
layout(std430, binding = 4) readonly buffer Mask { int mask[]; };         // bound to Query without a mask
layout(std430, binding = 5) readonly buffer AttnBias { SFLOAT attnBias[]; };  // bound to Query without one
layout(std430, binding = 6) buffer Scores { float scores[]; };
layout(std430, binding = 7) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint rows;  // batch * heads * seq
  uint groupStride;
  uint seq;
  uint heads;
  uint total;
  uint pastLen;
  uint head;
  uint vHead;
  uint hasBias;
  uint causal;
  float scale;
  float maskFilter;
  uint hasAttnBias;
  uint biasStrides[4];  // attention_bias element strides over (batch, head, seq, total); 0 where broadcast
} p;

shared float queryRow[MAX_HEAD];
#include "workgroup_reduce.glsl"

bool masked(uint b, uint s, uint t) {
  if (p.causal != 0u && t > p.pastLen + s) return true;
#if MASK == 1
  return int(t) >= mask[b];
#elif MASK == 2
  return mask[b * p.total + t] == 0;
#elif MASK == 3
  return mask[(b * p.seq + s) * p.total + t] == 0;
#else
  return false;
#endif
}

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * p.groupStride;
  if (row >= p.rows) return;  // the whole workgroup leaves together
  uint tid = gl_LocalInvocationID.x;
  uint s = row % p.seq;
  uint h = (row / p.seq) % p.heads;
  uint b = row / (p.seq * p.heads);

  uint qBase = ((b * p.seq + s) * p.heads + h) * p.head;
  for (uint i = tid; i < p.head; i += LOCAL_SIZE_X) {
    queryRow[i] = float(q[qBase + i]) + (p.hasBias != 0u ? float(bias[h * p.head + i]) : 0.0);
  }
  barrier();

  uint kBase = (b * p.heads + h) * p.total * p.head;
  uint vBase = (b * p.heads + h) * p.total * p.vHead;
  uint scoreBase = row * p.total;
  float localMax = -3.402823e38;
  for (uint t = tid; t < p.total; t += LOCAL_SIZE_X) {
    float dot = 0.0;
    for (uint i = 0u; i < p.head; ++i) dot += queryRow[i] * float(keys[kBase + t * p.head + i]);
    float score = dot * p.scale;
    if (masked(b, s, t)) score += p.maskFilter;
    if (p.hasAttnBias != 0u) {
      score += float(attnBias[b * p.biasStrides[0] + h * p.biasStrides[1] + s * p.biasStrides[2] + t * p.biasStrides[3]]);
    }
    scores[scoreBase + t] = score;
    localMax = max(localMax, score);
  }
  float top = reduceMax(localMax);
  float localSum = 0.0;
  for (uint t = tid; t < p.total; t += LOCAL_SIZE_X) {
    float e = exp(scores[scoreBase + t] - top);
    scores[scoreBase + t] = e;
    localSum += e;
  }
  float sum = reduceSum(localSum);
  memoryBarrierBuffer();
  barrier();

  uint outBase = ((b * p.seq + s) * p.heads + h) * p.vHead;
  for (uint i = tid; i < p.vHead; i += LOCAL_SIZE_X) {
    float acc = 0.0;
    for (uint t = 0u; t < p.total; ++t) acc += scores[scoreBase + t] * float(values[vBase + t * p.vHead + i]);
    y[outBase + i] = SFLOAT(p.total > 0u ? acc / sum : 0.0);
  }
}
#endif
