// Private helpers shared by the quantization kernels (quantize_linear.cpp, qlinear_ops.cpp): the rounding and
// saturation rule of ONNX quantization and readers for scale and zero-point inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_utils.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// saturate(round(scaled) + zeroPoint) into Q's range, rounding half to even (std::nearbyint in the default
// rounding mode). `scaled` is value / scale, computed by the caller in F (float, or double for int32 inputs).
// NaN has no integer value; it maps to the zero point, i.e. to a dequantized 0.
template <class Q, class F>
Q saturateQuantize(F scaled, int32_t zeroPoint) {
  if (std::isnan(scaled)) return static_cast<Q>(zeroPoint);
  const F lo = static_cast<F>(std::numeric_limits<Q>::lowest()),
          hi = static_cast<F>(std::numeric_limits<Q>::max());
  const F value = std::nearbyint(scaled) + static_cast<F>(zeroPoint);
  return static_cast<Q>(value < lo ? lo : value > hi ? hi : value);
}

// y[i] = saturateQuantize<Q>(float(acc[i]) * multiplier, zeroPoint) for i < count, bit for bit, in a loop the
// compiler vectorizes: for a finite multiplier the product is clamped to the integer bounds first (rounding
// is monotone and keeps integers, so clamping before or after it agrees), and |value| <= 2^22 rounds half to
// even by adding and subtracting 1.5 * 2^23 (the default rounding mode; the compiler does not reassociate
// floats).
template <class Q>
void requantize(const int32_t* acc, int64_t count, float multiplier, int32_t zeroPoint, Q* y) {
  if (!std::isfinite(multiplier)) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = saturateQuantize<Q>(static_cast<float>(acc[i]) * multiplier, zeroPoint);
    return;
  }
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest() - zeroPoint),
              hi = static_cast<float>(std::numeric_limits<Q>::max() - zeroPoint);
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  for (int64_t i = 0; i < count; ++i) {
    float v = static_cast<float>(acc[i]) * multiplier;
    v = v < lo ? lo : v > hi ? hi : v;
    v = (v + kRound) - kRound;
    y[i] = static_cast<Q>(static_cast<int32_t>(v) + zeroPoint);
  }
}

// The values of a scale input as floats (float up to opset 17; float16/bfloat16 from opset 19).
inline Result<std::vector<float>> readScales(const Tensor& scale, const std::string& what) {
  std::vector<float> values;
  Status status = dispatchType<float, Float16, BFloat16>(scale.dtype(), [&]<class T>() {
    const T* s = scale.data<T>();
    values.assign(s, s + scale.numel());
    return Status::ok();
  });
  if (!status.isOk()) return invalidArgument(what + " must be float, got " + dataTypeName(scale.dtype()));
  return values;
}

// The values of an integer zero-point input (8/16-bit or int32), widened to int32 (empty when `zeroPoint` is
// null).
inline Result<std::vector<int32_t>> readZeroPoints(const Tensor* zeroPoint, const std::string& what) {
  std::vector<int32_t> values;
  if (!zeroPoint) return values;
  Status status =
      dispatchType<uint8_t, int8_t, uint16_t, int16_t, int32_t>(zeroPoint->dtype(), [&]<class T>() {
        const T* z = zeroPoint->data<T>();
        values.assign(z, z + zeroPoint->numel());
        return Status::ok();
      });
  if (!status.isOk()) {
    return invalidArgument(what + " must be an 8-, 16- or 32-bit integer, got " +
                           dataTypeName(zeroPoint->dtype()));
  }
  return values;
}

// True for a per-tensor parameter: a scalar or a one-element 1-D tensor (what exporters write for "scalar").
inline bool isPerTensor(const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; }

}  // namespace kiln::cpu
