// QuantizeLinear (QUANTIZE 1: float32 x to packed 8-bit y, SIGNED for int8) and DequantizeLinear (QUANTIZE 0:
// packed 8-bit x, or int32 x with X_INT32, to float32 y), per tensor or per axis: element i uses scale and zero
// point (i / inner) % channels (see engine/src/ep/vulkan/kernels/quantization.cpp). Each invocation handles one
// 32-bit word of the 8-bit tensor, i.e. four elements, so no two invocations write the same word.
// DYNAMIC (DynamicQuantizeLinear's last step) writes 0 when the computed scale is 0, as the CPU EP does.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if QUANTIZE
layout(std430, binding = 0) readonly buffer X { float x[]; };
#elif X_INT32
layout(std430, binding = 0) readonly buffer X { int x[]; };
#else
layout(std430, binding = 0) readonly buffer X { uint x[]; };
#endif
layout(std430, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, binding = 2) readonly buffer ZeroPoint { uint zeroPoint[]; };  // packed like the 8-bit tensor
#if QUANTIZE
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };
#else
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint inner;     // elements per scale value along the axis (count for per tensor)
  uint channels;  // scale values (1 for per tensor)
  uint hasZeroPoint;
} p;

const bool kSigned = SIGNED != 0;

// An element's parameter index c = (i / inner) % channels and its position in the run of `inner` elements that
// share it: divided once per word, then advanced element by element (integer division is slow on CPU drivers).
struct Channel {
  uint c, within;
};

Channel channelOf(uint i) {
  Channel ch = Channel(0u, 0u);
  if (p.channels != 1u) ch = Channel((i / p.inner) % p.channels, i % p.inner);
  return ch;
}

void advance(inout Channel ch) {
  if (p.channels == 1u) return;
  if (++ch.within == p.inner) {
    ch.within = 0u;
    ch.c = ch.c + 1u == p.channels ? 0u : ch.c + 1u;
  }
}

void main() {
  uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  uint first = word * 4u;
  if (first >= p.count) return;
  uint last = min(first + 4u, p.count);
#if QUANTIZE
#if DYNAMIC
  if ((floatBitsToUint(scale[0]) & 0x7FFFFFFFu) == 0u) {
    y[word] = 0u;
    return;
  }
#endif
  uint packed = 0u;
  Channel ch = channelOf(first);
  for (uint i = first; i < last; ++i, advance(ch)) {
    int zp = p.hasZeroPoint != 0u ? LOAD_Q(zeroPoint, ch.c, kSigned) : 0;
    int q = quantizeDivided(x[i], scale[ch.c], zp, kSigned);
    packed |= (uint(q) & 0xFFu) << ((i - first) * 8u);
  }
  y[word] = packed;
#else
  Channel ch = channelOf(first);
  for (uint i = first; i < last; ++i, advance(ch)) {
#if X_INT32
    int centered = x[i];  // int32 x takes no zero point
#else
    int zp = p.hasZeroPoint != 0u ? LOAD_Q(zeroPoint, ch.c, kSigned) : 0;
    int centered = LOAD_Q(x, i, kSigned) - zp;
#endif
    y[i] = float(centered) * scale[ch.c];
  }
#endif
}
