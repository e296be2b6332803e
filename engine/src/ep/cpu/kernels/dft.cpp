// DFT (opsets 17 and 20) and STFT (opset 17), sharing one complex transform computed in double.
//
// Tensors hold complex values as a trailing dimension: [..., 1] is real, [..., 2] is (real, imaginary);
// outputs are always [..., 2]. The transform is X[k] = sum_j x[j] e^(-2 pi i jk / n) (e^(+...) / n for the
// inverse), an iterative radix-2 FFT when n is a power of two and Bluestein's chirp-z algorithm (a
// power-of-two circular convolution) otherwise, so every length costs O(n log n).
//
// Semantics follow the ONNX reference: DFT's `axis` counts the input's dims (negative values count from the
// last signal dim, like numpy on the signal without its complex dim); dft_length zero-pads or truncates the
// signal along that axis; onesided keeps bins [0, n / 2] of the full transform, for real or complex input and
// for the inverse too. DFT-20 takes the axis as input 2 (default -2) and counts a negative one from the back of
// the whole input, complex dim included (so -2 is the last signal dim). STFT frames are frame_length long, frame_step apart, the window (if any) multiplies
// each frame, frames = (signal_length - frame_length) / frame_step + 1, and onesided defaults to 1.
#include <algorithm>
#include <complex>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

using Complex = std::complex<double>;

// e^(-2 pi i k / m) for k in [0, m / 2).
std::vector<Complex> twiddlesFor(int64_t m) {
  std::vector<Complex> twiddles(static_cast<size_t>(m / 2));
  for (int64_t k = 0; k < m / 2; ++k) {
    const double angle = -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(m);
    twiddles[static_cast<size_t>(k)] = {std::cos(angle), std::sin(angle)};
  }
  return twiddles;
}

// In-place forward radix-2 FFT of m (a power of two) values.
void fftPowerOfTwo(Complex* a, int64_t m, const std::vector<Complex>& twiddles) {
  for (int64_t i = 1, j = 0; i < m; ++i) {
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    const int64_t half = len / 2, stride = m / len;
    for (int64_t start = 0; start < m; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const Complex v = a[start + k + half] * twiddles[static_cast<size_t>(k * stride)];
        a[start + k + half] = a[start + k] - v;
        a[start + k] += v;
      }
    }
  }
}

// The DFT of one length n >= 1, with its tables built once.
class FftPlan {
 public:
  explicit FftPlan(int64_t n) : n_(n) {
    m_ = 1;
    while (m_ < n_) m_ <<= 1;
    if (m_ != n_) {
      // Bluestein: X[k] = w[k] sum_j (x[j] w[j]) conj(w[k - j]) with w[j] = e^(-pi i j^2 / n), a circular
      // convolution of length m >= 2n - 1. j^2 is reduced mod 2n so the angle stays exact for large j.
      m_ = 1;
      while (m_ < 2 * n_ - 1) m_ <<= 1;
      chirp_.resize(static_cast<size_t>(n_));
      for (int64_t j = 0; j < n_; ++j) {
        const int64_t square = (j * j) % (2 * n_);
        const double angle = -std::numbers::pi * static_cast<double>(square) / static_cast<double>(n_);
        chirp_[static_cast<size_t>(j)] = {std::cos(angle), std::sin(angle)};
      }
      filter_.assign(static_cast<size_t>(m_), Complex{});
      filter_[0] = std::conj(chirp_[0]);
      for (int64_t j = 1; j < n_; ++j) {
        filter_[static_cast<size_t>(j)] = filter_[static_cast<size_t>(m_ - j)] =
            std::conj(chirp_[static_cast<size_t>(j)]);
      }
    }
    twiddles_ = twiddlesFor(m_);
    if (m_ != n_) fftPowerOfTwo(filter_.data(), m_, twiddles_);
  }

  int64_t size() const { return n_; }

  // Transforms data (n values) in place; the inverse is unscaled (the caller divides by n).
  void transform(std::vector<Complex>& data, bool inverse) {
    if (inverse) {
      for (Complex& v : data) v = std::conj(v);
    }
    if (m_ == n_) {
      fftPowerOfTwo(data.data(), m_, twiddles_);
    } else {
      work_.assign(static_cast<size_t>(m_), Complex{});
      for (size_t j = 0; j < static_cast<size_t>(n_); ++j) work_[j] = data[j] * chirp_[j];
      fftPowerOfTwo(work_.data(), m_, twiddles_);
      // Inverse FFT of the product as conj(FFT(conj(.))) / m.
      for (size_t j = 0; j < work_.size(); ++j) work_[j] = std::conj(work_[j] * filter_[j]);
      fftPowerOfTwo(work_.data(), m_, twiddles_);
      const double scale = 1.0 / static_cast<double>(m_);
      for (size_t k = 0; k < static_cast<size_t>(n_); ++k) data[k] = std::conj(work_[k]) * scale * chirp_[k];
    }
    if (inverse) {
      for (Complex& v : data) v = std::conj(v);
    }
  }

 private:
  int64_t n_;
  int64_t m_;
  std::vector<Complex> twiddles_;
  std::vector<Complex> chirp_;
  std::vector<Complex> filter_;  // FFT of the zero-padded conj(chirp), wrapped for a circular convolution
  std::vector<Complex> work_;
};

// Reads a one-element int32/int64 input.
Result<int64_t> readIntScalar(const std::string& label, const Tensor& tensor, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, readIndexInput(label, tensor, what.c_str()));
  if (values.size() != 1)
    return nodeError(label, what + " must be a scalar, got shape " + shapeToString(tensor.shape()));
  return values[0];
}

Status checkComplexDim(const std::string& label, const Tensor& x, const char* what) {
  const int64_t components = x.rank() == 0 ? 0 : x.dim(x.rank() - 1);
  if (components != 1 && components != 2) {
    return nodeError(label, std::string(what) +
                                " must end in a dimension of 1 (real) or 2 (complex), got shape " +
                                shapeToString(x.shape()));
  }
  return Status::ok();
}

// The transform of one length, rebuilt only when the length changes (runs of a session are serialized).
class PlanCache {
 public:
  FftPlan& get(int64_t n) {
    if (!plan_ || plan_->size() != n) plan_ = std::make_unique<FftPlan>(n);
    return *plan_;
  }

 private:
  std::unique_ptr<FftPlan> plan_;
};

class DftKernel final : public Kernel {
 public:
  explicit DftKernel(const KernelInfo& info)
      : label_(info.node.opType),
        axisFromInput_(info.opset >= 20),
        axis_(info.node.attrInt("axis", 1)),
        inverse_(info.node.attrInt("inverse", 0) != 0),
        onesided_(info.node.attrInt("onesided", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return nodeError(label_, "missing input 'input'");
    KILN_RETURN_IF_ERROR(checkComplexDim(label_, *x, "input"));
    const int64_t signalRank = static_cast<int64_t>(x->rank()) - 1;
    int64_t given = axis_, axis = axis_ < 0 ? axis_ + signalRank : axis_;
    if (axisFromInput_) {
      given = -2;
      if (ctx.hasInput(2)) {
        KILN_ASSIGN_OR_RETURN(given, readIntScalar(label_, *ctx.input(2), "input 'axis'"));
      }
      axis = given < 0 ? given + signalRank + 1 : given;
    }
    if (axis < 0 || axis >= signalRank) {
      return nodeError(label_, "axis " + std::to_string(given) + " is out of range for input shape " +
                                   shapeToString(x->shape()) +
                                   " (the last dimension holds the complex parts)");
    }
    const int64_t available = x->dim(static_cast<size_t>(axis));
    int64_t n = available;
    if (ctx.hasInput(1)) {
      KILN_ASSIGN_OR_RETURN(n, readIntScalar(label_, *ctx.input(1), "input 'dft_length'"));
      if (n <= 0) return nodeError(label_, "dft_length must be positive, got " + std::to_string(n));
    }
    const int64_t bins = onesided_ ? n / 2 + 1 : n;
    Shape outShape = x->shape();
    outShape[static_cast<size_t>(axis)] = bins;
    outShape.back() = 2;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < signalRank; ++d) inner *= x->dim(static_cast<size_t>(d));
    const int64_t components = x->shape().back();
    Tensor& out = ctx.allocateOutput(0, x->dtype(), outShape);
    if (out.numel() == 0) return Status::ok();
    FftPlan& plan = plans_.get(n);
    const int64_t used = std::min(available, n);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    Status status = dispatchType<KILN_FLOAT_TYPES>(x->dtype(), [&]<class T>() {
      const T* src = x->data<T>();
      T* dst = out.data<T>();
      std::vector<Complex> line(static_cast<size_t>(n));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          std::fill(line.begin(), line.end(), Complex{});
          for (int64_t j = 0; j < used; ++j) {
            const T* v = src + ((o * available + j) * inner + i) * components;
            line[static_cast<size_t>(j)] = {toDouble(v[0]), components == 2 ? toDouble(v[1]) : 0.0};
          }
          plan.transform(line, inverse_);
          for (int64_t k = 0; k < bins; ++k) {
            T* y = dst + ((o * bins + k) * inner + i) * 2;
            y[0] = fromDouble<T>(line[static_cast<size_t>(k)].real() * scale);
            y[1] = fromDouble<T>(line[static_cast<size_t>(k)].imag() * scale);
          }
        }
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool axisFromInput_;
  int64_t axis_;
  bool inverse_;
  bool onesided_;
  PlanCache plans_;
};

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(const KernelInfo& info)
      : label_(info.node.opType), onesided_(info.node.attrInt("onesided", 1) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* signal = ctx.input(0);
    if (!signal || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'signal' and 'frame_step'");
    KILN_RETURN_IF_ERROR(checkComplexDim(label_, *signal, "signal"));
    if (signal->rank() != 3) {
      return nodeError(label_,
                       "signal must be [batch, length, 1 or 2], got shape " + shapeToString(signal->shape()));
    }
    const int64_t batch = signal->dim(0), length = signal->dim(1), components = signal->dim(2);
    KILN_ASSIGN_OR_RETURN(const int64_t step, readIntScalar(label_, *ctx.input(1), "input 'frame_step'"));
    if (step <= 0) return nodeError(label_, "frame_step must be positive, got " + std::to_string(step));
    const Tensor* windowTensor = ctx.input(2);
    std::vector<double> window;
    if (windowTensor) {
      if (windowTensor->rank() != 1 || windowTensor->dtype() != signal->dtype()) {
        return nodeError(label_, "window must be 1-D with the signal's type, got " +
                                     std::string(dataTypeName(windowTensor->dtype())) + " " +
                                     shapeToString(windowTensor->shape()));
      }
      KILN_ASSIGN_OR_RETURN(window, readDoubleValues(*windowTensor));
    }
    int64_t frameLength = windowTensor ? windowTensor->dim(0) : length;
    if (ctx.hasInput(3)) {
      KILN_ASSIGN_OR_RETURN(frameLength, readIntScalar(label_, *ctx.input(3), "input 'frame_length'"));
      if (windowTensor && frameLength != windowTensor->dim(0)) {
        return nodeError(label_, "frame_length " + std::to_string(frameLength) +
                                     " differs from the window length " +
                                     std::to_string(windowTensor->dim(0)));
      }
    }
    if (frameLength <= 0 || frameLength > length) {
      return nodeError(label_, "frame length " + std::to_string(frameLength) +
                                   " must be in [1, signal length " + std::to_string(length) + "]");
    }
    const int64_t frames = (length - frameLength) / step + 1;
    const int64_t bins = onesided_ ? frameLength / 2 + 1 : frameLength;
    Tensor& out = ctx.allocateOutput(0, signal->dtype(), {batch, frames, bins, 2});
    if (out.numel() == 0) return Status::ok();
    FftPlan& plan = plans_.get(frameLength);
    Status status = dispatchType<KILN_FLOAT_TYPES>(signal->dtype(), [&]<class T>() {
      const T* src = signal->data<T>();
      T* dst = out.data<T>();
      std::vector<Complex> frame(static_cast<size_t>(frameLength));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
          for (int64_t j = 0; j < frameLength; ++j) {
            const T* v = src + (b * length + f * step + j) * components;
            const double w = window.empty() ? 1.0 : window[static_cast<size_t>(j)];
            frame[static_cast<size_t>(j)] =
                Complex{toDouble(v[0]), components == 2 ? toDouble(v[1]) : 0.0} * w;
          }
          plan.transform(frame, false);
          T* y = dst + (b * frames + f) * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            y[2 * k] = fromDouble<T>(frame[static_cast<size_t>(k)].real());
            y[2 * k + 1] = fromDouble<T>(frame[static_cast<size_t>(k)].imag());
          }
        }
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool onesided_;
  PlanCache plans_;
};

}  // namespace

void registerDftKernels(KernelRegistry& registry) {
  registry.add("DFT", 17, kAnyOpset, makeFactory<DftKernel>());
  registry.add("STFT", 17, kAnyOpset, makeFactory<StftKernel>());
}

}  // namespace kiln::cpu
