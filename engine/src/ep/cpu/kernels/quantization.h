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
