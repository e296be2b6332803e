// The statistics every normalization takes of a contiguous run of values (a row of LayerNormalization, a group of
// GroupNormalization, a channel plane of InstanceNormalization, a token of RMS norms): accumulated in double
// whatever the element type, so a long row of halves or floats loses nothing to summation order.
#pragma once

#include <cmath>
#include <cstdint>

#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {

struct RowMoments {
  double mean = 0;
  double invStd = 0;  // 1 / sqrt(variance + epsilon), the population variance
};

// Mean and inverse standard deviation of x[0..n), two passes (mean first, then squared deviations), n > 0.
template <class T>
RowMoments rowMoments(const T* x, int64_t n, double epsilon) {
  using C = ComputeType<T>;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(static_cast<C>(x[i]));
  const double mean = sum / static_cast<double>(n);
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(static_cast<C>(x[i])) - mean;
    squares += d * d;
  }
  return {mean, 1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon)};
}

// 1 / sqrt(mean(x^2) + epsilon) over x[0..n), n > 0: the scale of RMS normalization (no mean is subtracted).
template <class T>
double rowInvRms(const T* x, int64_t n, double epsilon) {
  using C = ComputeType<T>;
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(static_cast<C>(x[i]));
    squares += v * v;
  }
  return 1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon);
}

}  // namespace kiln::cpu
