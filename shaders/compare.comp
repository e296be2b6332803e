// Comparisons and logic with a bool result: out = OP(a, b) (one byte per element), broadcasting as in binary.comp.
// INPUT_BOOL 0: float32 inputs (Equal, Less, Greater, LessOrEqual, GreaterOrEqual); 1: bool inputs (And, Or,
// Xor, Equal on bools). UNARY 1: out = OP(a) with a single input (Not). GRID as binary.comp's BROADCAST 2.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = LOCAL_SIZE_X) in;
#if INPUT_BOOL
#define VALUE uint8_t
#define READ(v) ((v) != uint8_t(0))
#else
#define VALUE SFLOAT
#define READ(v) float(v)
#endif
layout(std430, binding = 0) readonly buffer InputA { VALUE a[]; };
#if UNARY
layout(std430, binding = 1) writeonly buffer Output { uint8_t c[]; };
#else
layout(std430, binding = 1) readonly buffer InputB { VALUE b[]; };
layout(std430, binding = 2) writeonly buffer Output { uint8_t c[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  uint dims[6];
  uint stridesA[6];
  uint stridesB[6];
} p;

void main() {
#if GRID
  uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y, z = gl_GlobalInvocationID.z;
  if (x >= p.dims[0]) return;
  uint i = x + p.dims[0] * (y + p.dims[1] * z);
  uint ia = x * p.stridesA[0] + y * p.stridesA[1] + z * p.stridesA[2];
  uint ib = x * p.stridesB[0] + y * p.stridesB[1] + z * p.stridesB[2];
#else
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  uint ia = 0, ib = 0, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint coord = rest % p.dims[d];
    rest /= p.dims[d];
    ia += coord * p.stridesA[d];
    ib += coord * p.stridesB[d];
  }
#endif
#if UNARY
  bool r = OP(READ(a[ia]));
#else
  bool r = OP(READ(a[ia]), READ(b[ib]));
#endif
  c[i] = r ? uint8_t(1) : uint8_t(0);
}
