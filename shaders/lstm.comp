// One LSTM time step for every direction, batch row and hidden unit (ONNX gate order i, o, f, c; default
// activations sigmoid, tanh, tanh; optional bias and peepholes). Invocation (j, b, d) computes the four gate
// pre-activations x_t W[d]^T + h_prev R[d]^T + Wb + Rb for unit j, then the cell update. x_t and h_prev are
// staged through shared memory in tiles, so each weight row streams once. h_prev is the previous step's row
// of Y (or initial_h), the cell state is updated in place in Yc. See
// engine/src/ep/vulkan/kernels/recurrent.cpp. The inputs may be float16 storage (storage.glsl); Y and Yc, which
// carry the state between steps, stay float32 (the kernel casts them to float16 outputs at the end).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
// Shapes for layout 0; layout 1 swaps the batch to the front: X [N, S, I], Y [N, S, D, H], states [N, D, H].
layout(std430, binding = 0) readonly buffer InputX { SFLOAT X[]; };     // [S, N, I]
layout(std430, binding = 1) readonly buffer InputW { SFLOAT W[]; };     // [D, 4H, I]
layout(std430, binding = 2) readonly buffer InputR { SFLOAT R[]; };     // [D, 4H, H]
layout(std430, binding = 3) readonly buffer InputB { SFLOAT B[]; };     // [D, 8H]
layout(std430, binding = 4) readonly buffer InputP { SFLOAT P[]; };     // [D, 3H]
layout(std430, binding = 5) readonly buffer InitH { SFLOAT initH[]; };  // [D, N, H]
layout(std430, binding = 6) readonly buffer InitC { SFLOAT initC[]; };  // [D, N, H]
layout(std430, binding = 7) buffer OutputY { float Y[]; };             // [S, D, N, H]
layout(std430, binding = 8) buffer OutputC { float Yc[]; };            // [D, N, H]
layout(push_constant) uniform Params {
  uint S, N, I, H, D;
  uint step;
  uint flags;        // 1 bias, 2 peepholes, 4 initial_h, 8 initial_c, 16 layout 1 (batch first)
  uint reverseMask;  // bit d: direction d runs backwards in time
} p;

shared float tile[LOCAL_SIZE_X];

float sigmoid(float v) { return 1.0 / (1.0 + exp(-v)); }
float tanhSafe(float v) { return tanh(clamp(v, -15.0, 15.0)); }

bool batchFirst() { return (p.flags & 16u) != 0u; }
// Element offsets of X[t, b, 0], Y[t, d, b, 0] and state[d, b, 0] in either layout.
uint xRow(uint t, uint b) { return (batchFirst() ? b * p.S + t : t * p.N + b) * p.I; }
uint yRow(uint t, uint d, uint b) {
  return (batchFirst() ? (b * p.S + t) * p.D + d : (t * p.D + d) * p.N + b) * p.H;
}
uint stateRow(uint d, uint b) { return (batchFirst() ? b * p.D + d : d * p.N + b) * p.H; }

void main() {
  uint j = gl_GlobalInvocationID.x, b = gl_WorkGroupID.y, d = gl_WorkGroupID.z, lane = gl_LocalInvocationID.x;
  bool inRange = j < p.H;
  bool reverse = ((p.reverseMask >> d) & 1u) != 0u;
  uint t = reverse ? p.S - 1u - p.step : p.step;
  uint H = p.H, G = 4u * p.H;
  float acc[4] = float[4](0.0, 0.0, 0.0, 0.0);
  if (inRange && (p.flags & 1u) != 0u) {
    for (uint g = 0u; g < 4u; ++g) acc[g] = float(B[d * 2u * G + g * H + j]) + float(B[d * 2u * G + G + g * H + j]);
  }
  // Input term.
  uint xBase = xRow(t, b);
  for (uint k0 = 0u; k0 < p.I; k0 += LOCAL_SIZE_X) {
    tile[lane] = k0 + lane < p.I ? float(X[xBase + k0 + lane]) : 0.0;
    barrier();
    uint n = min(uint(LOCAL_SIZE_X), p.I - k0);
    if (inRange) {
      for (uint g = 0u; g < 4u; ++g) {
        uint w = (d * G + g * H + j) * p.I + k0;
        float sum = 0.0;
        for (uint k = 0u; k < n; ++k) sum += tile[k] * float(W[w + k]);
        acc[g] += sum;
      }
    }
    barrier();
  }
  // Recurrent term (h_prev is zero at the first step without initial_h).
  bool first = p.step == 0u;
  if (!first || (p.flags & 4u) != 0u) {
    uint tPrev = reverse ? t + 1u : t - 1u;
    uint hBase = first ? stateRow(d, b) : yRow(tPrev, d, b);
    for (uint k0 = 0u; k0 < H; k0 += LOCAL_SIZE_X) {
      float v = 0.0;
      if (k0 + lane < H) v = first ? float(initH[hBase + k0 + lane]) : Y[hBase + k0 + lane];
      tile[lane] = v;
      barrier();
      uint n = min(uint(LOCAL_SIZE_X), H - k0);
      if (inRange) {
        for (uint g = 0u; g < 4u; ++g) {
          uint r = (d * G + g * H + j) * H + k0;
          float sum = 0.0;
          for (uint k = 0u; k < n; ++k) sum += tile[k] * float(R[r + k]);
          acc[g] += sum;
        }
      }
      barrier();
    }
  }
  if (!inRange) return;
  uint state = stateRow(d, b) + j;
  float cPrev = first ? ((p.flags & 8u) != 0u ? float(initC[state]) : 0.0) : Yc[state];
  float gi = acc[0], go = acc[1], gf = acc[2], gc = acc[3];
  bool peep = (p.flags & 2u) != 0u;
  if (peep) {
    gi += float(P[d * 3u * H + j]) * cPrev;
    gf += float(P[d * 3u * H + 2u * H + j]) * cPrev;
  }
  float c = sigmoid(gf) * cPrev + sigmoid(gi) * tanhSafe(gc);
  if (peep) go += float(P[d * 3u * H + H + j]) * c;
  Yc[state] = c;
  Y[yRow(t, d, b) + j] = sigmoid(go) * tanhSafe(c);
}
