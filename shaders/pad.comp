// Pad: out[c] = in[map(c)] or the constant. Per axis the kept input range is [0, keptDims) after cropping
// (negative pads are folded into srcOffset by engine/src/ep/vulkan/kernels/pad.cpp); i = c - before indexes
// it and the MODE define picks what lies outside: 0 constant, 1 reflect (no edge repeat), 2 edge, 3 wrap. Raw
// words, so float32 and int32 data share the shader (16-bit elements with ELEM16: float16; bytes with ELEM8:
// uint8/int8).
#version 450
#if ELEM16  // 16-bit elements (float16): WORDS is ignored
#extension GL_EXT_shader_16bit_storage : require
#elif ELEM8  // 8-bit elements (uint8/int8)
#extension GL_EXT_shader_8bit_storage : require
#endif
#if ELEM16
#define ELEM uint16_t
#elif ELEM8
#define ELEM uint8_t
#else
#define ELEM uint
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { ELEM src[]; };
layout(std430, binding = 1) writeonly buffer Output { ELEM dst[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  uint value;     // constant mode: the pad value's bits (the low 16 with ELEM16, the low 8 with ELEM8)
  int srcOffset;  // where the kept region starts
  uint dims[6];   // output shape
  int kept[6];    // kept input extent per axis
  int before[6];  // pad before the kept region (>= 0)
  int strides[6]; // input element strides
} p;

// a mod m in [0, m) for any sign of a (GLSL leaves % of negative operands undefined; division truncates).
int pmod(int a, int m) {
  int r = a - (a / m) * m;
  return r < 0 ? r + m : r;
}

// The input coordinate for output coordinate c (relative to the kept range) along an axis of kept extent n,
// or -1 for the constant.
int source(int c, int n) {
  if (c >= 0 && c < n) return c;
  if (MODE == 0) return -1;
  if (MODE == 1) {
    if (n == 1) return 0;
    int period = 2 * (n - 1);
    c = pmod(c, period);
    return c >= n ? period - c : c;
  }
  if (MODE == 2) return clamp(c, 0, n - 1);
  return pmod(c, n);
}

// Each invocation writes CHUNK consecutive output elements; the outer coordinates are decomposed once per
// row.
void main() {
  uint first = (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride) * CHUNK;
  int last = int(p.rank) - 1;
  uint n = last >= 0 ? p.dims[last] : 1u;
  uint c = n;         // innermost output coordinate; n forces a decomposition
  int rowBase = 0;    // source offset of the row without the innermost axis, -1 in a constant row
  for (uint e = 0u; e < CHUNK; ++e) {
    uint i = first + e;
    if (i >= p.count) return;
    if (c == n) {
      rowBase = p.srcOffset;
      uint rest = i;
      for (int k = last; k >= 0; --k) {
        uint ck = rest % p.dims[k];
        rest /= p.dims[k];
        if (k == last) {
          c = ck;
          continue;
        }
        int sk = source(int(ck) - p.before[k], p.kept[k]);
        if (sk < 0) rowBase = -1;
        if (rowBase >= 0) rowBase += sk * p.strides[k];
      }
    }
    if (last < 0) {
      dst[i] = src[p.srcOffset];
      return;
    }
    int sk = rowBase < 0 ? -1 : source(int(c) - p.before[last], p.kept[last]);
    dst[i] = sk < 0 ? ELEM(p.value) : src[rowBase + sk * p.strides[last]];
    ++c;
  }
}
