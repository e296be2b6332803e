// y = OP(x) elementwise. OP(v) comes from the variant (see engine/src/ep/vulkan/kernels/elementwise.cpp), with
// the op's float attributes in p.alpha / p.beta / p.gamma.
#version 450
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { float x[]; };
layout(std430, binding = 1) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;  // invocations per row of workgroups (2D dispatch for large tensors)
  float alpha;
  float beta;
  float gamma;
} p;

// erf with |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit).
float erf_approx(float v) {
  float z = abs(v);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277)))))))));
  return v >= 0.0 ? 1.0 - r : r - 1.0;
}

float softplus(float v) { return v > 20.0 ? v : log(1.0 + exp(v)); }

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  float v = x[i];
  float alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  y[i] = OP(v);
}
