// Signal-processing generators (opset 17): the cosine-sum windows HannWindow, HammingWindow and
// BlackmanWindow, and MelWeightMatrix. All take scalar inputs and write a tensor of the `output_datatype`
// attribute's type.
//
// Windows: w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N) with N = size (periodic=1) or size - 1
// (periodic=0), computed in double. A symmetric window of size 1 is [1] (N would be 0; numpy and torch
// agree). Hamming uses a0 = 25/46 as the ONNX function body does. Integer output types truncate toward zero.
//
// MelWeightMatrix follows the ONNX reference computation exactly, including its quirks: the mel range is
// split into num_mel_bins + 2 steps of (mel_high - mel_low) / (num_mel_bins + 2) (not + 1), each point maps
// back to the spectrogram bin floor((dft_length + 1) * hz / sample_rate) with Python's float floor division,
// and a triangle whose left and centre bins coincide is a single 1 at the centre. Bins that fall outside [0,
// dft_length / 2] are an error (the reference raises an IndexError or wraps negative indices).
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// Writes `values` into a new output tensor of `type` and shape `shape`.
Status writeOutput(KernelContext& ctx, DataType type, const Shape& shape, const std::vector<double>& values) {
  Tensor& out = ctx.allocateOutput(0, type, shape);
  return dispatchType<KILN_NUMERIC_TYPES>(type, [&]<class T>() {
    T* y = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) y[i] = fromDouble<T>(values[i]);
    return Status::ok();
  });
}

// Checks the output_datatype attribute against the types the schema allows.
Status checkOutputType(const std::string& label, DataType type) {
  Status status = dispatchType<KILN_NUMERIC_TYPES>(type, [&]<class T>() { return Status::ok(); });
  if (status.isOk()) return status;
  return nodeError(label, "output_datatype " + std::to_string(static_cast<int>(type)) +
                              " is not a numeric type (float, double, float16, bfloat16 or an integer type)");
}

// Reads a scalar (one-element) int32/int64 input.
Result<int64_t> readIntScalar(const std::string& label, const KernelContext& ctx, size_t index,
                              const char* name) {
  const Tensor* tensor = ctx.input(index);
  if (!tensor) return nodeError(label, std::string("missing input '") + name + "'");
  const std::string what = std::string("input '") + name + "'";
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, readIndexInput(label, *tensor, what.c_str()));
  if (values.size() != 1) return nodeError(label, what + " must be a scalar");
  return values[0];
}

struct CosineSum {
  double a0 = 0, a1 = 0, a2 = 0;
};

class WindowKernel final : public Kernel {
 public:
  WindowKernel(const KernelInfo& info, CosineSum coefficients)
      : label_(info.node.opType),
        coefficients_(coefficients),
        periodic_(info.node.attrInt("periodic", 1) != 0),
        outputType_(static_cast<DataType>(info.node.attrInt("output_datatype", 1))) {}

  Status init() { return checkOutputType(label_, outputType_); }

  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const int64_t size, readIntScalar(label_, ctx, 0, "size"));
    if (size < 0) return nodeError(label_, "size must be >= 0, got " + std::to_string(size));
    std::vector<double> values(static_cast<size_t>(size));
    const int64_t period = periodic_ ? size : size - 1;
    const double step = period > 0 ? 2.0 * std::numbers::pi / static_cast<double>(period) : 0.0;
    for (int64_t k = 0; k < size; ++k) {
      const double angle = step * static_cast<double>(k);
      values[static_cast<size_t>(k)] = period > 0 ? coefficients_.a0 - coefficients_.a1 * std::cos(angle) +
                                                        coefficients_.a2 * std::cos(2.0 * angle)
                                                  : 1.0;
    }
    return writeOutput(ctx, outputType_, {size}, values);
  }

 private:
  std::string label_;
  CosineSum coefficients_;
  bool periodic_;
  DataType outputType_;
};

template <int kKind>
Result<std::unique_ptr<Kernel>> createWindow(const KernelInfo& info) {
  constexpr CosineSum kHann{0.5, 0.5, 0.0};
  constexpr CosineSum kHamming{25.0 / 46.0, 21.0 / 46.0, 0.0};
  constexpr CosineSum kBlackman{0.42, 0.5, 0.08};
  auto kernel = std::make_unique<WindowKernel>(info, kKind == 0 ? kHann : kKind == 1 ? kHamming : kBlackman);
  KILN_RETURN_IF_ERROR(kernel->init());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

// Python's float floor division a // b (numpy floor_divide), which can differ from floor(a / b) by one when
// a / b rounds onto an integer.
double pythonFloorDivide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floorDiv = std::floor(div);
  if (div - floorDiv > 0.5) floorDiv += 1.0;
  return floorDiv;
}

double hertzToMel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double melToHertz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const KernelInfo& info)
      : label_(info.node.opType),
        outputType_(static_cast<DataType>(info.node.attrInt("output_datatype", 1))) {}

  Status init() { return checkOutputType(label_, outputType_); }

  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const int64_t melBins, readIntScalar(label_, ctx, 0, "num_mel_bins"));
    KILN_ASSIGN_OR_RETURN(const int64_t dftLength, readIntScalar(label_, ctx, 1, "dft_length"));
    KILN_ASSIGN_OR_RETURN(const int64_t sampleRate, readIntScalar(label_, ctx, 2, "sample_rate"));
    if (melBins <= 0 || dftLength <= 0 || sampleRate <= 0) {
      return nodeError(label_, "num_mel_bins, dft_length and sample_rate must be positive, got " +
                                   std::to_string(melBins) + ", " + std::to_string(dftLength) + ", " +
                                   std::to_string(sampleRate));
    }
    KILN_ASSIGN_OR_RETURN(const double lowerHz, readFloatScalar(ctx, 3, "lower_edge_hertz"));
    KILN_ASSIGN_OR_RETURN(const double upperHz, readFloatScalar(ctx, 4, "upper_edge_hertz"));
    if (!(lowerHz >= 0.0) || !(upperHz >= lowerHz) || !std::isfinite(upperHz)) {
      return nodeError(label_, "needs 0 <= lower_edge_hertz <= upper_edge_hertz (finite), got " +
                                   std::to_string(lowerHz) + " and " + std::to_string(upperHz));
    }
    const int64_t spectrogramBins = dftLength / 2 + 1;
    const size_t points = static_cast<size_t>(melBins) + 2;
    const double lowMel = hertzToMel(lowerHz);
    const double melStep = (hertzToMel(upperHz) - lowMel) / static_cast<double>(points);
    std::vector<int64_t> bins(points);
    for (size_t i = 0; i < points; ++i) {
      const double hz = melToHertz(static_cast<double>(i) * melStep + lowMel);
      const double bin =
          pythonFloorDivide(static_cast<double>(dftLength + 1) * hz, static_cast<double>(sampleRate));
      if (!(bin >= 0.0) || bin >= static_cast<double>(spectrogramBins)) {
        return nodeError(
            label_, "upper_edge_hertz " + std::to_string(upperHz) + " maps past the last spectrogram bin " +
                        std::to_string(spectrogramBins - 1) + "; keep it at or below sample_rate / 2");
      }
      bins[i] = static_cast<int64_t>(bin);
    }
    std::vector<double> weights(static_cast<size_t>(spectrogramBins * melBins), 0.0);
    auto at = [&](int64_t bin, int64_t mel) -> double& {
      return weights[static_cast<size_t>(bin * melBins + mel)];
    };
    for (int64_t m = 0; m < melBins; ++m) {
      const int64_t left = bins[static_cast<size_t>(m)];
      const int64_t center = bins[static_cast<size_t>(m) + 1];
      const int64_t right = bins[static_cast<size_t>(m) + 2];
      if (center == left) {
        at(center, m) = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j) {
          at(j, m) = static_cast<double>(j - left) / static_cast<double>(center - left);
        }
      }
      for (int64_t j = center; j < right; ++j) {
        at(j, m) = static_cast<double>(right - j) / static_cast<double>(right - center);
      }
    }
    return writeOutput(ctx, outputType_, {spectrogramBins, melBins}, weights);
  }

 private:
  Result<double> readFloatScalar(const KernelContext& ctx, size_t index, const char* name) const {
    const Tensor* tensor = ctx.input(index);
    if (!tensor) return nodeError(label_, std::string("missing input '") + name + "'");
    const DataType type = tensor->dtype();
    if (type != DataType::FLOAT && type != DataType::DOUBLE && type != DataType::FLOAT16 &&
        type != DataType::BFLOAT16) {
      return nodeError(label_,
                       std::string("input '") + name + "' must be a float type, got " + dataTypeName(type));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<double> values, readDoubleValues(*tensor));
    if (values.size() != 1) return nodeError(label_, std::string("input '") + name + "' must be a scalar");
    return values[0];
  }

  std::string label_;
  DataType outputType_;
};

Result<std::unique_ptr<Kernel>> createMelWeightMatrix(const KernelInfo& info) {
  auto kernel = std::make_unique<MelWeightMatrixKernel>(info);
  KILN_RETURN_IF_ERROR(kernel->init());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerSignalWindowKernels(KernelRegistry& registry) {
  registry.add("HannWindow", 17, kAnyOpset, createWindow<0>);
  registry.add("HammingWindow", 17, kAnyOpset, createWindow<1>);
  registry.add("BlackmanWindow", 17, kAnyOpset, createWindow<2>);
  registry.add("MelWeightMatrix", 17, kAnyOpset, createMelWeightMatrix);
}

}  // namespace kiln::cpu
