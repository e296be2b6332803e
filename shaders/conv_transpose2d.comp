// 1-D/2-D transposed convolution (1-D runs as height 1), NCHW, as a gather: output pixel (oh, ow) sums the
// input pixels (ih, iw) with ih * sH - pH + kh * dH == oh (same for w). Each invocation computes one output pixel
// for 4 output channels, reading vec4 weights prepacked as [group][channel block][c][kh][kw][4] (see
// kernels/conv.cpp).
#version 450
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { float x[]; };
layout(std430, binding = 1) readonly buffer Weights { vec4 w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };  // per output channel (unread without hasBias)
layout(std430, binding = 3) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Params {
  uint inC;  // input channels per group
  uint inH, inW, outH, outW;
  uint outC;  // output channels per group
  uint groups;
  uint mBlocks;  // ceil(outC / 4)
  uint kH, kW, sH, sW, dH, dW;
  int pH, pW;  // leading pads
  uint rowStride;
  uint hasBias;
} p;

void main() {
  const uint P = p.outH * p.outW;
  const uint q = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (q >= P) return;
  const uint mb = gl_WorkGroupID.z % p.mBlocks;
  const uint ng = gl_WorkGroupID.z / p.mBlocks;  // n * groups + g
  const uint g = ng % p.groups;
  const int oh = int(q / p.outW) + p.pH, ow = int(q % p.outW) + p.pW;
  const uint HW = p.inH * p.inW;
  const uint xBase = ng * p.inC * HW;
  const uint KK = p.kH * p.kW;
  const uint wBase = (g * p.mBlocks + mb) * p.inC * KK;
  vec4 acc = vec4(0.0);
  for (uint kh = 0; kh < p.kH; ++kh) {
    const int th = oh - int(kh * p.dH);
    if (th < 0 || th % int(p.sH) != 0) continue;
    const uint ih = uint(th) / p.sH;
    if (ih >= p.inH) continue;
    for (uint kw = 0; kw < p.kW; ++kw) {
      const int tw = ow - int(kw * p.dW);
      if (tw < 0 || tw % int(p.sW) != 0) continue;
      const uint iw = uint(tw) / p.sW;
      if (iw >= p.inW) continue;
      uint xi = xBase + ih * p.inW + iw;
      uint wi = wBase + kh * p.kW + kw;
      for (uint c = 0; c < p.inC; ++c, xi += HW, wi += KK) acc += x[xi] * w[wi];
    }
  }
  const uint yBase = ng * p.outC * P + q;
  for (uint i = 0; i < 4u; ++i) {
    const uint m = mb * 4u + i;
    if (m >= p.outC) break;
    y[yBase + m * P] = acc[i] + (p.hasBias != 0u ? bias[g * p.outC + m] : 0.0);
  }
}
