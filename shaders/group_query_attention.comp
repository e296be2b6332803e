// com.microsoft GroupQueryAttention (engine/src/ep/vulkan/kernels/attention.cpp), two passes:
//   PRESENT: one invocation per element of present_key/present_value [batch, kv_heads, present, head]: sequence b's
//     cached positions (past_b = seqlens_k[b] + 1 - seq, 0 for the first prompt) from past, then this step's keys
//     (rotated at their positions with ROTARY) and values, then zeros.
//   otherwise (attention): one workgroup per (batch, head, query position): the query row (rotated) in shared
//     memory, scores of the visible keys (causal, local window) into a scratch row, their max and sum reduced over
//     the workgroup, then each invocation weighs the values of its head elements.
// Math in float32; tensors in SFLOAT storage (storage.glsl); seqlens_k int32. Lengths outside the buffers are
// clamped, never read out of bounds.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;

#if PRESENT
layout(std430, binding = 0) readonly buffer KeySource { SFLOAT kSrc[]; };    // key, or the packed query
layout(std430, binding = 1) readonly buffer ValueSource { SFLOAT vSrc[]; };  // value, or the packed query
layout(std430, binding = 2) readonly buffer PastKey { SFLOAT pastK[]; };     // bound to KeySource without past
layout(std430, binding = 3) readonly buffer PastValue { SFLOAT pastV[]; };
layout(std430, binding = 4) readonly buffer SeqLens { int seqlens[]; };
layout(std430, binding = 5) readonly buffer CosCache { SFLOAT cosCache[]; };  // bound to KeySource without ROTARY
layout(std430, binding = 6) readonly buffer SinCache { SFLOAT sinCache[]; };
layout(std430, binding = 7) writeonly buffer PresentKey { SFLOAT presentK[]; };
layout(std430, binding = 8) writeonly buffer PresentValue { SFLOAT presentV[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint seq;
  uint kvHeads;
  uint presentLen;
  uint pastLen;
  uint head;
  uint rotary;
  uint firstPrompt;
  uint rowWidth;  // elements per (batch, position) row of the key/value sources
  uint kOffset;   // element offset of kv head 0's key in such a row
  uint vOffset;
  uint interleaved;
  uint positions;  // rows of the caches
} p;
#else
layout(std430, binding = 0) readonly buffer Query { SFLOAT q[]; };
layout(std430, binding = 1) readonly buffer PresentKey { SFLOAT keys[]; };
layout(std430, binding = 2) readonly buffer PresentValue { SFLOAT values[]; };
layout(std430, binding = 3) readonly buffer SeqLens { int seqlens[]; };
layout(std430, binding = 4) readonly buffer CosCache { SFLOAT cosCache[]; };  // bound to Query without ROTARY
layout(std430, binding = 5) readonly buffer SinCache { SFLOAT sinCache[]; };
layout(std430, binding = 6) buffer Scores { float scores[]; };
layout(std430, binding = 7) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint rows;  // batch * heads * seq
  uint groupStride;
  uint seq;
  uint heads;
  uint kvHeads;
  uint presentLen;
  uint head;
  uint rotary;
  uint firstPrompt;
  uint rowWidth;  // elements per (batch, position) row of the query
  uint interleaved;
  float scale;
  float softcap;
  int localWindow;
  uint smoothSoftmax;
  uint positions;
} p;
#endif

// Cached positions of sequence b before this step.
int pastOf(uint b, uint limit) {
  int total = seqlens[b] + 1;
  int past = p.firstPrompt != 0 ? 0 : total - int(p.seq);
  return clamp(past, 0, int(limit));
}

// Element i of a head row at `base` of `src`, rotated for position `pos` when i is in the rotary part.
#define ROTATED(src, base, i, pos, out)                                                         \
  {                                                                                            \
    float x_ = float(src[(base) + (i)]);                                                       \
    out = x_;                                                                                  \
    if (ROTARY != 0 && (i) < p.rotary) {                                                       \
      uint half_ = p.rotary / 2u;                                                              \
      bool first_ = p.interleaved != 0 ? ((i) % 2u) == 0u : (i) < half_;                        \
      uint k_ = p.interleaved != 0 ? (i) / 2u : (first_ ? (i) : (i) - half_);                   \
      uint partner_ = p.interleaved != 0 ? (first_ ? (i) + 1u : (i) - 1u) : (first_ ? (i) + half_ : (i) - half_); \
      uint row_ = min(uint(pos), p.positions - 1u) * half_ + k_;                                \
      float c_ = float(cosCache[row_]), s_ = float(sinCache[row_]);                            \
      float y_ = float(src[(base) + partner_]);                                                \
      out = first_ ? x_ * c_ - y_ * s_ : y_ * s_ + x_ * c_;                                    \
    }                                                                                          \
  }

#if PRESENT
void main() {
  uint idx = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (idx >= p.count) return;
  uint i = idx % p.head;
  uint rest = idx / p.head;
  uint pos = rest % p.presentLen;
  rest /= p.presentLen;
  uint kvh = rest % p.kvHeads;
  uint b = rest / p.kvHeads;
  int past = pastOf(b, p.pastLen);
  float kOut = 0.0, vOut = 0.0;
  if (int(pos) < past) {
    uint at = ((b * p.kvHeads + kvh) * p.pastLen + pos) * p.head + i;
    kOut = float(pastK[at]);
    vOut = float(pastV[at]);
  } else if (int(pos) < past + int(p.seq)) {
    uint row = (b * p.seq + (pos - uint(past))) * p.rowWidth;
    ROTATED(kSrc, row + p.kOffset + kvh * p.head, i, pos, kOut);
    vOut = float(vSrc[row + p.vOffset + kvh * p.head + i]);
  }
  presentK[idx] = SFLOAT(kOut);
  presentV[idx] = SFLOAT(vOut);
}
#else
shared float queryRow[MAX_HEAD];
#include "workgroup_reduce.glsl"

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * p.groupStride;
  if (row >= p.rows) return;  // the whole workgroup leaves together
  uint tid = gl_LocalInvocationID.x;
  uint s = row % p.seq;
  uint h = (row / p.seq) % p.heads;
  uint b = row / (p.seq * p.heads);
  int total = clamp(seqlens[b] + 1, 0, int(p.presentLen));
  int pos = pastOf(b, p.presentLen) + int(s);
  int last = min(pos, total - 1);
  int first = p.localWindow >= 0 ? max(0, pos - p.localWindow + 1) : 0;

  uint qBase = (b * p.seq + s) * p.rowWidth + h * p.head;
  for (uint i = tid; i < p.head; i += LOCAL_SIZE_X) {
    float v;
    ROTATED(q, qBase, i, pos, v);
    queryRow[i] = v;
  }
  barrier();

  uint kvBase = (b * p.kvHeads + h / (p.heads / p.kvHeads)) * p.presentLen * p.head;
  uint scoreBase = row * p.presentLen;
  float localMax = -3.402823e38;
  for (int t = first + int(tid); t <= last; t += int(LOCAL_SIZE_X)) {
    uint k = kvBase + uint(t) * p.head;
    float dot = 0.0;
    for (uint i = 0u; i < p.head; ++i) dot += queryRow[i] * float(keys[k + i]);
    float score = dot * p.scale;
    if (p.softcap > 0.0) score = p.softcap * tanh(score / p.softcap);
    scores[scoreBase + uint(t)] = score;
    localMax = max(localMax, score);
  }
  float top = reduceMax(localMax);
  if (p.smoothSoftmax != 0) top = max(top, 0.0);
  float localSum = 0.0;
  for (int t = first + int(tid); t <= last; t += int(LOCAL_SIZE_X)) {
    float e = exp(scores[scoreBase + uint(t)] - top);
    scores[scoreBase + uint(t)] = e;
    localSum += e;
  }
  float sum = reduceSum(localSum) + (p.smoothSoftmax != 0 ? exp(-top) : 0.0);
  memoryBarrierBuffer();
  barrier();

  uint outBase = ((b * p.seq + s) * p.heads + h) * p.head;
  for (uint i = tid; i < p.head; i += LOCAL_SIZE_X) {
    float acc = 0.0;
    for (int t = first; t <= last; ++t) acc += scores[scoreBase + uint(t)] * float(values[kvBase + uint(t) * p.head + i]);
    y[outBase + i] = SFLOAT(first <= last ? acc / sum : 0.0);
  }
}
#endif
