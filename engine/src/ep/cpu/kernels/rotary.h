// Rotary position embedding of one head's row, shared by RotaryEmbedding (ai.onnx and com.microsoft) and
// GroupQueryAttention's do_rotary: the first `rotary` values rotate by the angles whose cosines and sines the cache
// rows hold (rotary / 2 each); interleaved pairs element 2i with 2i + 1, otherwise i with i + rotary / 2; values
// past `rotary` (up to headSize) are copied unchanged. Computes in float for halves.
#pragma once

#include <cstdint>

#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {

template <class Src, class Dst, class Cache>
void rotateHeadRow(const Src* src, Dst* dst, const Cache* cosRow, const Cache* sinRow, int64_t rotary,
                   int64_t headSize, bool interleaved) {
  using C = ComputeType<Src>;
  const int64_t half = rotary / 2;
  for (int64_t k = 0; k < half; ++k) {
    const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
    const C c = static_cast<C>(cosRow[k]), s = static_cast<C>(sinRow[k]);
    const C x1 = static_cast<C>(src[i1]), x2 = static_cast<C>(src[i2]);
    dst[i1] = Dst(x1 * c - x2 * s);
    dst[i2] = Dst(x1 * s + x2 * c);
  }
  for (int64_t k = rotary; k < headSize; ++k) dst[k] = Dst(static_cast<C>(src[k]));
}

}  // namespace kiln::cpu
