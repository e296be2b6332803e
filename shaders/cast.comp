// Cast between float32 (type 0), int32 (1), int64 (2) and float16 (3), SRC_TYPE to DST_TYPE, and from uint8 (4) and
// int8 (5), which are read packed four to a 32-bit word and converted like int32 (see
// engine/src/ep/vulkan/kernels/cast.cpp). int64 moves as (low, high) word pairs, so no shaderInt64 is needed;
// float16 needs only 16-bit storage (values convert through float32).
// Float to integer follows numpy on x86 as the CPU EP does: truncate, NaN gives 0, saturate to int64, then
// keep the low 32 bits for int32. int64 to float rounds to nearest even.
#version 450
#if SRC_TYPE == 3 || DST_TYPE == 3
#extension GL_EXT_shader_16bit_storage : require
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
#if SRC_TYPE == 2
layout(std430, binding = 0) readonly buffer Input { uvec2 src[]; };
#elif SRC_TYPE == 3
layout(std430, binding = 0) readonly buffer Input { float16_t src[]; };
#else
layout(std430, binding = 0) readonly buffer Input { uint src[]; };
#endif
#if SRC_TYPE == 5  // int8: sign-extended byte
#define LOAD_SRC(i) bitfieldExtract(int(src[(i) >> 2u]), int(((i) & 3u) * 8u), 8)
#elif SRC_TYPE == 4  // uint8: zero-extended byte
#define LOAD_SRC(i) int(bitfieldExtract(src[(i) >> 2u], int(((i) & 3u) * 8u), 8))
#else
#define LOAD_SRC(i) int(src[i])
#endif
#if DST_TYPE == 2
layout(std430, binding = 1) writeonly buffer Output { uvec2 dst[]; };
#elif DST_TYPE == 3
layout(std430, binding = 1) writeonly buffer Output { float16_t dst[]; };
#else
layout(std430, binding = 1) writeonly buffer Output { uint dst[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
} p;

uvec2 floatToInt64(float v) {
  if (isnan(v)) return uvec2(0u);
  if (v >= 9223372036854775808.0) return uvec2(0xFFFFFFFFu, 0x7FFFFFFFu);
  if (v < -9223372036854775808.0) return uvec2(0u, 0x80000000u);
  float t = trunc(v);
  if (abs(t) < 2147483648.0) {
    int x = int(t);
    return uvec2(uint(x), x < 0 ? 0xFFFFFFFFu : 0u);
  }
  // |t| >= 2^31 is a multiple of 256, so both halves are exact.
  float hi = floor(t / 4294967296.0);
  float lo = t - hi * 4294967296.0;
  return uvec2(uint(lo), uint(int(hi)));
}

// (lo, hi) >> s for 0 < s < 64.
uvec2 shiftRight(uvec2 v, int s) {
  if (s >= 32) return uvec2(v.y >> uint(s - 32), 0u);
  return uvec2((v.x >> uint(s)) | (v.y << uint(32 - s)), v.y >> uint(s));
}

float int64ToFloat(uvec2 v) {
  bool negative = (v.y & 0x80000000u) != 0u;
  if (negative) {  // two's complement magnitude (-2^63 stays 2^63 as unsigned)
    v = uvec2(~v.x + 1u, ~v.y + (v.x == 0u ? 1u : 0u));
  }
  float magnitude;
  if (v.y == 0u) {
    magnitude = float(v.x);  // conversions are correctly rounded
  } else {
    int shift = findMSB(v.y) + 32 - 23;  // keep 24 significant bits
    uint m = shiftRight(v, shift).x;
    uint roundBit = shiftRight(v, shift - 1).x & 1u;
    int low = shift - 1;  // bits below the rounding bit
    bool sticky = low >= 32 ? (v.x != 0u || (v.y & ((1u << uint(low - 32)) - 1u)) != 0u)
                            : (v.x & ((1u << uint(low)) - 1u)) != 0u;
    if (roundBit == 1u && (sticky || (m & 1u) == 1u)) m += 1u;
    magnitude = ldexp(float(m), shift);
  }
  return negative ? -magnitude : magnitude;
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
#if SRC_TYPE == 0 || SRC_TYPE == 3
#if SRC_TYPE == 0
  float f = uintBitsToFloat(src[i]);
#else
  float f = float(src[i]);
#endif
#if DST_TYPE == 0
  dst[i] = floatBitsToUint(f);
#elif DST_TYPE == 3
  dst[i] = float16_t(f);
#elif DST_TYPE == 1
  dst[i] = floatToInt64(f).x;
#else
  dst[i] = floatToInt64(f);
#endif
#elif SRC_TYPE == 1 || SRC_TYPE == 4 || SRC_TYPE == 5
  int x = LOAD_SRC(i);
#if DST_TYPE == 0
  dst[i] = floatBitsToUint(float(x));
#elif DST_TYPE == 3
  dst[i] = float16_t(float(x));
#else
  dst[i] = uvec2(uint(x), x < 0 ? 0xFFFFFFFFu : 0u);
#endif
#else
#if DST_TYPE == 0
  dst[i] = floatBitsToUint(int64ToFloat(src[i]));
#elif DST_TYPE == 3
  dst[i] = float16_t(int64ToFloat(src[i]));
#else
  dst[i] = src[i].x;
#endif
#endif
}
