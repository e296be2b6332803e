// Math helpers shared by the elementwise shaders (#include "elementwise_math.glsl").

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

// ONNX Pow: a negative base with an integral exponent is defined (GLSL's pow is not).
float pow_onnx(float x, float y) {
  if (x >= 0.0) return pow(x, y);
  if (y != floor(y)) return 0.0 / 0.0;
  float r = pow(-x, y);
  return mod(y, 2.0) == 0.0 ? r : -r;
}
