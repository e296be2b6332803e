// One GRU time step for every direction, batch row and hidden unit (ONNX gate order z, r, h; default activations
// sigmoid, tanh; optional bias and initial_h). Invocation (j, b, d) computes unit j's pre-activations
// x_t W[d]^T + h_prev R[d]^T + Wb + Rb with x_t and h_prev staged through shared memory in tiles, so each weight
// row streams once. h_prev is the previous step's row of Y (or initial_h, or zero).
// LBR 1 (linear_before_reset): h~ = tanh(x Wh^T + Wbh + r * (h_prev Rh^T + Rbh)), so PHASE 0 finishes the step.
// LBR 0: h~ = tanh(x Wh^T + Wbh + (r * h_prev) Rh^T + Rbh) needs every unit's r first: PHASE 0 stores z, r * h_prev
// and x Wh^T + Wbh in G, and PHASE 1 (the next dispatch) multiplies by Rh and finishes the step.
// Either way h_t = (1 - z) h~ + z h_prev goes to Y. See engine/src/ep/vulkan/kernels/recurrent.cpp. The inputs may be
// float16 storage (storage.glsl); Y and G stay float32 (the kernel casts the outputs to float16 at the end).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
// Shapes for layout 0; layout 1 swaps the batch to the front: X [N, S, I], Y [N, S, D, H], initial_h [N, D, H].
layout(std430, binding = 0) readonly buffer InputX { SFLOAT X[]; };     // [S, N, I]
layout(std430, binding = 1) readonly buffer InputW { SFLOAT W[]; };     // [D, 3H, I]
layout(std430, binding = 2) readonly buffer InputR { SFLOAT R[]; };     // [D, 3H, H]
layout(std430, binding = 3) readonly buffer InputB { SFLOAT B[]; };     // [D, 6H]
layout(std430, binding = 4) readonly buffer InitH { SFLOAT initH[]; };  // [D, N, H]
layout(std430, binding = 5) buffer OutputY { float Y[]; };             // [S, D, N, H]
layout(std430, binding = 6) buffer Gates { float G[]; };               // [D, N, 3H] (LBR 0 only)
layout(push_constant) uniform Params {
  uint S, N, I, H, D;
  uint step;
  uint flags;        // 1 bias, 4 initial_h, 16 layout 1 (batch first)
  uint reverseMask;  // bit d: direction d runs backwards in time
} p;

shared float tile[LOCAL_SIZE_X];

float sigmoid(float v) { return 1.0 / (1.0 + exp(-v)); }
float tanhSafe(float v) { return tanh(clamp(v, -15.0, 15.0)); }

bool batchFirst() { return (p.flags & 16u) != 0u; }
bool hasBias() { return (p.flags & 1u) != 0u; }
// Element offsets of X[t, b, 0], Y[t, d, b, 0] and initial_h[d, b, 0] in either layout.
uint xRow(uint t, uint b) { return (batchFirst() ? b * p.S + t : t * p.N + b) * p.I; }
uint yRow(uint t, uint d, uint b) {
  return (batchFirst() ? (b * p.S + t) * p.D + d : (t * p.D + d) * p.N + b) * p.H;
}
uint stateRow(uint d, uint b) { return (batchFirst() ? b * p.D + d : d * p.N + b) * p.H; }
float bias(uint d, uint k) { return hasBias() ? float(B[d * 6u * p.H + k]) : 0.0; }

// Element k of direction d's h_prev for batch row b at this step (zero at the first step without initial_h).
float hPrev(uint d, uint b, uint t, bool reverse, uint k) {
  if (p.step == 0u) return (p.flags & 4u) != 0u ? float(initH[stateRow(d, b) + k]) : 0.0;
  return Y[yRow(reverse ? t + 1u : t - 1u, d, b) + k];
}

void main() {
  uint j = gl_GlobalInvocationID.x, b = gl_WorkGroupID.y, d = gl_WorkGroupID.z, lane = gl_LocalInvocationID.x;
  bool inRange = j < p.H;
  bool reverse = ((p.reverseMask >> d) & 1u) != 0u;
  uint t = reverse ? p.S - 1u - p.step : p.step;
  uint H = p.H, gRow = (d * p.N + b) * 3u * H;
#if PHASE == 0
  float accX[3] = float[3](0.0, 0.0, 0.0);  // x_t Wg^T
  float accH[3] = float[3](0.0, 0.0, 0.0);  // h_prev Rg^T (the h gate only with LBR 1)
  uint xBase = xRow(t, b);
  for (uint k0 = 0u; k0 < p.I; k0 += LOCAL_SIZE_X) {
    tile[lane] = k0 + lane < p.I ? float(X[xBase + k0 + lane]) : 0.0;
    barrier();
    uint n = min(uint(LOCAL_SIZE_X), p.I - k0);
    if (inRange) {
      for (uint g = 0u; g < 3u; ++g) {
        uint w = (d * 3u * H + g * H + j) * p.I + k0;
        float sum = 0.0;
        for (uint k = 0u; k < n; ++k) sum += tile[k] * float(W[w + k]);
        accX[g] += sum;
      }
    }
    barrier();
  }
  if (p.step != 0u || (p.flags & 4u) != 0u) {
    for (uint k0 = 0u; k0 < H; k0 += LOCAL_SIZE_X) {
      tile[lane] = k0 + lane < H ? hPrev(d, b, t, reverse, k0 + lane) : 0.0;
      barrier();
      uint n = min(uint(LOCAL_SIZE_X), H - k0);
      if (inRange) {
        for (uint g = 0u; g < (LBR != 0 ? 3u : 2u); ++g) {
          uint r = (d * 3u * H + g * H + j) * H + k0;
          float sum = 0.0;
          for (uint k = 0u; k < n; ++k) sum += tile[k] * float(R[r + k]);
          accH[g] += sum;
        }
      }
      barrier();
    }
  }
  if (!inRange) return;
  float z = sigmoid(accX[0] + accH[0] + bias(d, j) + bias(d, 3u * H + j));
  float r = sigmoid(accX[1] + accH[1] + bias(d, H + j) + bias(d, 4u * H + j));
  float h = hPrev(d, b, t, reverse, j);
#if LBR
  float candidate = tanhSafe(accX[2] + bias(d, 2u * H + j) + r * (accH[2] + bias(d, 5u * H + j)));
  Y[yRow(t, d, b) + j] = (1.0 - z) * candidate + z * h;
#else
  G[gRow + j] = z;
  G[gRow + H + j] = r * h;
  G[gRow + 2u * H + j] = accX[2] + bias(d, 2u * H + j);
#endif
#else  // PHASE 1 (LBR 0): the candidate's recurrent term from r * h_prev, then h_t
  float acc = 0.0;
  for (uint k0 = 0u; k0 < H; k0 += LOCAL_SIZE_X) {
    tile[lane] = k0 + lane < H ? G[gRow + H + k0 + lane] : 0.0;
    barrier();
    uint n = min(uint(LOCAL_SIZE_X), H - k0);
    if (inRange) {
      uint r = (d * 3u * H + 2u * H + j) * H + k0;
      for (uint k = 0u; k < n; ++k) acc += tile[k] * float(R[r + k]);
    }
    barrier();
  }
  if (!inRange) return;
  float z = G[gRow + j];
  float candidate = tanhSafe(G[gRow + 2u * H + j] + acc + bias(d, 5u * H + j));
  Y[yRow(t, d, b) + j] = (1.0 - z) * candidate + z * hPrev(d, b, t, reverse, j);
#endif
}
