// compareTensors (kiln/compare.h): element-wise error metrics of a tensor against its reference.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/compare.h"

namespace kiln {
namespace {

// Element `i` of `t` as a double; false for types that have no numeric value.
bool numericAt(const Tensor& t, int64_t i, double& out) {
  switch (t.dtype()) {
    case DataType::FLOAT: out = t.data<float>()[i]; return true;
    case DataType::DOUBLE: out = t.data<double>()[i]; return true;
    case DataType::FLOAT16: out = static_cast<float>(t.data<Float16>()[i]); return true;
    case DataType::BFLOAT16: out = static_cast<float>(t.data<BFloat16>()[i]); return true;
    case DataType::INT8: out = t.data<int8_t>()[i]; return true;
    case DataType::UINT8: out = t.data<uint8_t>()[i]; return true;
    case DataType::INT16: out = t.data<int16_t>()[i]; return true;
    case DataType::UINT16: out = t.data<uint16_t>()[i]; return true;
    case DataType::INT32: out = t.data<int32_t>()[i]; return true;
    case DataType::UINT32: out = t.data<uint32_t>()[i]; return true;
    case DataType::INT64: out = static_cast<double>(t.data<int64_t>()[i]); return true;
    case DataType::UINT64: out = static_cast<double>(t.data<uint64_t>()[i]); return true;
    case DataType::BOOL: out = t.data<bool>()[i] ? 1 : 0; return true;
    default: return false;
  }
}

bool isNumeric(DataType type) {
  switch (type) {
    case DataType::UNDEFINED:
    case DataType::STRING:
    case DataType::COMPLEX64:
    case DataType::COMPLEX128:
      return false;
    default:
      return true;
  }
}

std::vector<int64_t> unflatten(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

}  // namespace

double errorHistogramLowerEdge(int bin) { return bin <= 0 ? 0.0 : std::pow(10.0, bin - 11); }

int errorHistogramBin(double absError) {
  if (!(absError >= 1e-10)) return 0;
  const int bin = static_cast<int>(std::floor(std::log10(absError))) + 11;
  return std::clamp(bin, 1, kErrorHistogramBins - 1);
}

int64_t allowedBeyondTolerance(const Tolerance& tolerance, int64_t elements) {
  if (!(tolerance.maxFractionBeyond > 0) || elements <= 0) return 0;
  if (tolerance.maxFractionBeyond >= 1) return elements;
  // The product of a decimal fraction and a count can land just under the integer it names (0.29 * 100 is
  // 28.999999999999996): a relative nudge far below one element keeps floor() on the named count.
  const double product = tolerance.maxFractionBeyond * static_cast<double>(elements);
  return std::min(elements, static_cast<int64_t>(std::floor(product * (1 + 1e-12))));
}

TensorComparison compareTensors(const std::string& name, const Tensor& value, const Tensor& reference,
                                const Tolerance& tolerance) {
  TensorComparison c;
  c.name = name;
  c.dtype = value.dtype();
  c.referenceDtype = reference.dtype();
  c.shape = value.shape();
  c.referenceShape = reference.shape();
  if (!value.defined() || !reference.defined()) {
    c.missing = true;
    return c;
  }
  c.dtypeMismatch = c.dtype != c.referenceDtype;
  c.shapeMismatch = c.shape != c.referenceShape;
  c.unsupportedDtype = !isNumeric(c.dtype) || !isNumeric(c.referenceDtype);
  if (c.shapeMismatch || c.unsupportedDtype) return c;
  c.elements = value.numel();
  c.allowedBeyond = allowedBeyondTolerance(tolerance, c.elements);
  c.errorHistogram.assign(kErrorHistogramBins, 0);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double sumAbs = 0, dot = 0, normX = 0, normRef = 0, worstExcess = -kInf, worstAbs = -1;
  int64_t finitePairs = 0, worstExcessAt = -1, worstAbsAt = -1;
  for (int64_t i = 0; i < c.elements; ++i) {
    double x = 0, ref = 0;
    numericAt(value, i, x);
    numericAt(reference, i, ref);
    double excess = 0;
    if (std::isnan(x) || std::isnan(ref)) {
      if (std::isnan(x) && std::isnan(ref)) continue;
      ++c.nanMismatches;
      excess = kInf;
    } else if (std::isinf(x) || std::isinf(ref)) {
      if (x == ref) continue;
      ++c.infMismatches;
      excess = kInf;
    } else {
      const double err = std::fabs(x - ref);
      ++finitePairs;
      sumAbs += err;
      dot += x * ref;
      normX += x * x;
      normRef += ref * ref;
      if (err > c.maxAbsError) c.maxAbsError = err;
      ++c.errorHistogram[static_cast<size_t>(errorHistogramBin(err))];
      if (ref != 0 && err / std::fabs(ref) > c.maxRelError) c.maxRelError = err / std::fabs(ref);
      excess = err - (tolerance.atol + tolerance.rtol * std::fabs(ref));
      if (err > worstAbs) {
        worstAbs = err;
        worstAbsAt = i;
      }
    }
    if (excess > 0) ++c.beyondTolerance;
    if (excess > worstExcess) {
      worstExcess = excess;
      worstExcessAt = i;
    }
  }
  if (finitePairs > 0) c.meanAbsError = sumAbs / static_cast<double>(finitePairs);
  if (normX == 0 && normRef == 0) {
    c.cosineSimilarity = 1;
  } else if (normX == 0 || normRef == 0) {
    c.cosineSimilarity = 0;
  } else {
    c.cosineSimilarity = dot / (std::sqrt(normX) * std::sqrt(normRef));
  }
  if (c.elements > 0) c.fractionBeyondTolerance = static_cast<double>(c.beyondTolerance) / static_cast<double>(c.elements);
  const int64_t worstAt = c.beyondTolerance > 0 ? worstExcessAt : worstAbsAt;
  if (worstAt >= 0) {
    c.worst.flatIndex = worstAt;
    c.worst.index = unflatten(worstAt, c.shape);
    numericAt(value, worstAt, c.worst.value);
    numericAt(reference, worstAt, c.worst.reference);
  }
  return c;
}

bool ModelComparison::passed() const {
  for (const auto& output : outputs) {
    if (!output.passed()) return false;
  }
  return true;
}

bool NodeComparison::passed() const {
  for (const auto& output : outputs) {
    if (!output.passed()) return false;
  }
  return true;
}

}  // namespace kiln
