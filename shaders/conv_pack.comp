// Repacks convolution weights that are not constants (computed in the graph, or graph inputs) into the layout
// conv2d.comp and conv_transpose2d.comp read: [group][channel block][c][k][4], zero-padded output channels.
// The source is Conv's W [M, Cg, k...] or, with TRANSPOSED 1, ConvTranspose's W [C, Mg, k...]. Constant weights
// are packed the same way on the host at load (kernels/conv.cpp).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Source { SFLOAT w[]; };
layout(std430, binding = 1) writeonly buffer Packed { SFLOAT packed[]; };
layout(push_constant) uniform Params {
  uint count;  // packed elements
  uint rowStride;
  uint Mg, Cg, K, mBlocks;
} p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  uint rest = i / 4u;
  const uint k = rest % p.K;
  rest /= p.K;
  const uint c = rest % p.Cg;
  rest /= p.Cg;
  const uint m = rest % p.mBlocks * 4u + i % 4u;
  const uint g = rest / p.mBlocks;
  if (m >= p.Mg) {
    packed[i] = SFLOAT(0.0);
    return;
  }
#if TRANSPOSED
  packed[i] = w[((g * p.Cg + c) * p.Mg + m) * p.K + k];
#else
  packed[i] = w[((g * p.Mg + m) * p.Cg + c) * p.K + k];
#endif
}
