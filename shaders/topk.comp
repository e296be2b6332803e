// TopK: the k first elements of each row along the axis, largest first (LARGEST 1) or smallest first, ties to the
// lower index and NaN above every number (the CPU EP's order), with their int64 indices as two 32-bit words. The
// output is always sorted (allowed for sorted=0, whose order is unspecified).
// One workgroup per row. Invocation `lane` owns the row's elements j = lane (mod LOCAL_SIZE_X) and keeps the best of
// them not yet taken (its candidate). Each of the k rounds reduces the candidates in shared memory to the best one,
// writes it as output r, and only its owner rescans its elements for the best one ranked after it. A round costs
// log2(LOCAL_SIZE_X) barriers and one scan of n / LOCAL_SIZE_X elements: O(n / L + k (n / L + log L)) per row.
// See engine/src/ep/vulkan/kernels/topk.cpp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Values { SFLOAT values[]; };
layout(std430, binding = 2) writeonly buffer Indices { uint indices[]; };  // int64 as (low, high) words
layout(push_constant) uniform Params {
  uint rows;       // outer * inner
  uint rowStride;  // workgroups per y row of the dispatch
  uint n;          // axis length
  uint inner;      // elements after the axis
  uint k;          // 1 <= k <= n
} p;

const uint kNone = 0xffffffffu;  // no candidate: ranked after everything
shared float bestValue[LOCAL_SIZE_X];
shared uint bestIndex[LOCAL_SIZE_X];

// The CPU EP's valueLess: NaN above every number, so the order below is a strict total order.
bool valueLess(float a, float b) {
  if (isnan(a)) return false;
  if (isnan(b)) return true;
  return a < b;
}

// Whether element (va, ia) comes before (vb, ib) in the output.
bool before(float va, uint ia, float vb, uint ib) {
  if (ia == kNone) return false;
  if (ib == kNone) return true;
#if LARGEST
  bool aFirst = valueLess(vb, va), bFirst = valueLess(va, vb);
#else
  bool aFirst = valueLess(va, vb), bFirst = valueLess(vb, va);
#endif
  return aFirst || (!bFirst && ia < ib);
}

void main() {
  uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
  if (row >= p.rows) return;  // the whole workgroup leaves together
  uint lane = gl_LocalInvocationID.x;
  uint base = (row / p.inner) * p.n * p.inner + row % p.inner;
  uint outBase = (row / p.inner) * p.k * p.inner + row % p.inner;
  float myValue = 0.0;
  uint myIndex = kNone;
  for (uint j = lane; j < p.n; j += LOCAL_SIZE_X) {
    float v = float(x[base + j * p.inner]);
    if (before(v, j, myValue, myIndex)) {
      myValue = v;
      myIndex = j;
    }
  }
  for (uint r = 0u; r < p.k; ++r) {
    bestValue[lane] = myValue;
    bestIndex[lane] = myIndex;
    barrier();
    for (uint s = LOCAL_SIZE_X / 2u; s > 0u; s >>= 1u) {
      if (lane < s && before(bestValue[lane + s], bestIndex[lane + s], bestValue[lane], bestIndex[lane])) {
        bestValue[lane] = bestValue[lane + s];
        bestIndex[lane] = bestIndex[lane + s];
      }
      barrier();
    }
    float takenValue = bestValue[0];
    uint taken = bestIndex[0];
    if (lane == 0u) {
      uint o = outBase + r * p.inner;
      values[o] = x[base + taken * p.inner];  // the stored element itself (float16 stays exact)
      indices[2u * o] = taken;
      indices[2u * o + 1u] = 0u;
    }
    if (taken == myIndex) {  // the owner's next candidate: its best element ranked after the one taken
      myValue = 0.0;
      myIndex = kNone;
      for (uint j = lane; j < p.n; j += LOCAL_SIZE_X) {
        float v = float(x[base + j * p.inner]);
        if (before(takenValue, taken, v, j) && before(v, j, myValue, myIndex)) {
          myValue = v;
          myIndex = j;
        }
      }
    }
    barrier();  // every lane has read the winner before the next round overwrites it
  }
}
