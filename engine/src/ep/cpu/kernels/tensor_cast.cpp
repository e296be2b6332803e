// Cast and CastLike: element type conversion between every numeric type, bool, string, float16 and bfloat16.
#include <charconv>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/half_convert.h"
#include "ep/cpu/thread_pool.h"

namespace kiln::cpu {

void registerCastKernels(KernelRegistry& registry);

namespace {

template <class T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// ONNX's reference (and its test data up to opset 18) casts float to bfloat16 by truncating the low 16 bits;
// rounding to nearest would differ from the expected outputs by one bfloat16 ulp.
BFloat16 truncateToBFloat16(float value) {
  BFloat16 result;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  result.bits = std::isnan(value) ? static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7fc0u)
                                  : static_cast<uint16_t>(bits >> 16);
  return result;
}

// Float to integer like numpy on x86: NaN gives 0, values outside int64 saturate, narrower types then wrap.
template <class D, class S>
D floatToInteger(S value) {
  const double v = static_cast<double>(value);
  if (std::isnan(v)) return D(0);
  if constexpr (std::is_same_v<D, uint64_t>) {
    if (v >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
    if (v >= 9223372036854775808.0) return static_cast<uint64_t>(v);
  }
  int64_t wide;
  if (v >= 9223372036854775808.0) {
    wide = std::numeric_limits<int64_t>::max();
  } else if (v < -9223372036854775808.0) {
    wide = std::numeric_limits<int64_t>::min();
  } else {
    wide = static_cast<int64_t>(v);
  }
  return static_cast<D>(wide);
}

// Converts one numeric (or bool) value; strings are handled by formatValue/parseValue.
template <class D, class S>
D convertValue(S value) {
  if constexpr (std::is_same_v<S, D>) {
    return value;
  } else if constexpr (kIsHalf<S>) {
    return convertValue<D, float>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<D, bool>) {
    return value != S(0);
  } else if constexpr (std::is_same_v<D, Float16>) {
    return Float16(static_cast<float>(value));
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return truncateToBFloat16(static_cast<float>(value));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(value);
  } else if constexpr (std::is_floating_point_v<S>) {
    return floatToInteger<D>(value);
  } else {
    return static_cast<D>(value);  // integer to integer wraps (well defined since C++20), like numpy
  }
}

// Shortest text that reads back to the same value ("0.9767611"), "NaN", "INF" and "-INF" as ONNX expects.
template <class S>
std::string formatValue(S value) {
  if constexpr (std::is_same_v<S, bool>) {
    return value ? "1" : "0";
  } else if constexpr (kIsHalf<S> || std::is_floating_point_v<S>) {
    using F = std::conditional_t<std::is_same_v<S, double>, double, float>;
    const F v = static_cast<F>(value);
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
    return std::string(buffer, result.ptr);
  } else {
    return std::to_string(value);
  }
}

bool parsedWhole(const char* begin, const char* end) {
  if (end == begin) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
  return *end == '\0';
}

// Parses plain and scientific notation, "NaN", "INF", "+INF", "-INF" (any case), "true"/"false" for bool.
template <class D>
bool parseValue(const std::string& text, D& out) {
  const char* begin = text.c_str();
  char* end = nullptr;
  if constexpr (std::is_same_v<D, bool>) {
    if (text == "true" || text == "True" || text == "TRUE") return out = true, true;
    if (text == "false" || text == "False" || text == "FALSE") return out = false, true;
    const double v = std::strtod(begin, &end);
    out = v != 0.0;
    return parsedWhole(begin, end);
  } else if constexpr (std::is_same_v<D, float> || kIsHalf<D>) {
    const float v = std::strtof(begin, &end);
    out = convertValue<D>(v);
    return parsedWhole(begin, end);
  } else if constexpr (std::is_same_v<D, double>) {
    out = std::strtod(begin, &end);
    return parsedWhole(begin, end);
  } else {
    errno = 0;
    if constexpr (std::is_signed_v<D>) {
      const long long v = std::strtoll(begin, &end, 10);
      out = static_cast<D>(v);
    } else {
      const unsigned long long v = std::strtoull(begin, &end, 10);
      out = static_cast<D>(v);
    }
    if (errno == 0 && parsedWhole(begin, end)) return true;
    // "1e3" or "2.5" into an integer: parse as a number, then convert like a float cast.
    const double v = std::strtod(begin, &end);
    out = floatToInteger<D>(v);
    return parsedWhole(begin, end);
  }
}

template <class S, class D>
Status castElements(const std::string& label, const Tensor& input, Tensor& output) {
  const int64_t count = input.numel();
  if constexpr (std::is_same_v<S, std::string> && std::is_same_v<D, std::string>) {
    std::copy_n(input.strings(), count, output.strings());
  } else if constexpr (std::is_same_v<S, std::string>) {
    const std::string* src = input.strings();
    D* dst = output.data<D>();
    for (int64_t i = 0; i < count; ++i) {
      if (!parseValue(src[i], dst[i])) {
        return invalidArgument(label + ": cannot convert string '" + src[i] + "' to " +
                               dataTypeName(output.dtype()));
      }
    }
  } else if constexpr (std::is_same_v<D, std::string>) {
    const S* src = input.data<S>();
    std::string* dst = output.strings();
    for (int64_t i = 0; i < count; ++i) dst[i] = formatValue(src[i]);
  } else {
    const S* src = input.data<S>();
    D* dst = output.data<D>();
    for (int64_t i = 0; i < count; ++i) dst[i] = convertValue<D>(src[i]);
  }
  return Status::ok();
}

// Float32 <-> float16 as whole arrays (half_convert.h: F16C where the CPU has it), split over `pool`; false (nothing
// written) for other types.
bool castFloatHalfFast(const Tensor& input, Tensor& output, ThreadPool* pool) {
  const DataType from = input.dtype(), to = output.dtype();
  const bool narrowing = from == DataType::FLOAT && to == DataType::FLOAT16;
  const bool widening = from == DataType::FLOAT16 && to == DataType::FLOAT;
  if (!narrowing && !widening) return false;
  constexpr int64_t kGrain = 1 << 16;
  parallelFor(pool, input.numel(), kGrain, [&](int64_t begin, int64_t end) {
    if (narrowing) {
      floatsToHalves(input.data<float>() + begin, output.data<Float16>() + begin, end - begin);
    } else {
      halvesToFloats(input.data<Float16>() + begin, output.data<float>() + begin, end - begin);
    }
  });
  return true;
}

Status castTensor(const std::string& label, const Tensor& input, DataType to, KernelContext& ctx, ThreadPool* pool) {
  if (input.dtype() == to) {
    ctx.setOutput(0, input);
    return Status::ok();
  }
  Tensor& output = ctx.allocateOutput(0, to, input.shape());
  if (castFloatHalfFast(input, output, pool)) return Status::ok();
  Status status = dispatchType<KILN_ALL_TYPES>(input.dtype(), [&]<class S>() {
    return dispatchType<KILN_ALL_TYPES>(to, [&]<class D>() { return castElements<S, D>(label, input, output); });
  });
  if (status.code() == StatusCode::NOT_IMPLEMENTED) {
    return notImplemented(label + ": cannot cast " + dataTypeName(input.dtype()) + " to " + dataTypeName(to));
  }
  return status;
}

// Opset 1 names the target type as a string ("FLOAT"); later opsets use the TensorProto.DataType number.
Result<DataType> castTarget(const ir::Node& node) {
  const ir::Attribute* to = node.attribute("to");
  if (!to) return invalidArgument(node.label() + ": missing attribute 'to'");
  if (to->type == ir::AttributeType::STRING) {
    for (int code = 1; code <= 16; ++code) {
      std::string name = dataTypeName(static_cast<DataType>(code));
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::string wanted = to->s;
      for (char& c : wanted) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (name == wanted) return static_cast<DataType>(code);
    }
    return invalidArgument(node.label() + ": unknown 'to' type '" + to->s + "'");
  }
  // The types opsets 19-23 added: valid ONNX that Kiln has no element type for.
  static const char* const kNewerTypes[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                            "uint4", "int4", "float4e2m1", "float8e8m0"};
  if (to->i >= 17 && to->i <= 24) {
    return notImplemented(node.label() + ": casting to " + kNewerTypes[to->i - 17] + " (type " +
                          std::to_string(to->i) + ") is not supported");
  }
  if (to->i <= 0 || to->i > 16 || to->i == 14 || to->i == 15) {
    return invalidArgument(node.label() + ": unsupported 'to' type " + std::to_string(to->i));
  }
  return static_cast<DataType>(to->i);
}

class CastKernel final : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info) : label_(info.node.label()), pool_(info.threadPool) {}
  Status init(const KernelInfo& info) {
    KILN_ASSIGN_OR_RETURN(to_, castTarget(info.node));
    return Status::ok();
  }
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing input");
    return castTensor(label_, *ctx.input(0), to_, ctx, pool_);
  }

 private:
  std::string label_;
  ThreadPool* pool_ = nullptr;
  DataType to_ = DataType::UNDEFINED;
};

class CastLikeKernel final : public Kernel {
 public:
  explicit CastLikeKernel(const KernelInfo& info) : label_(info.node.label()), pool_(info.threadPool) {}
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0) || !ctx.hasInput(1)) return invalidArgument(label_ + ": needs input and target_type");
    return castTensor(label_, *ctx.input(0), ctx.input(1)->dtype(), ctx, pool_);
  }

 private:
  std::string label_;
  ThreadPool* pool_ = nullptr;
};

}  // namespace

void registerCastKernels(KernelRegistry& registry) {
  registry.add("Cast", 1, kAnyOpset, [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<CastKernel>(info);
    KILN_RETURN_IF_ERROR(kernel->init(info));
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
  registry.add("CastLike", 15, kAnyOpset, makeFactory<CastLikeKernel>());
}

}  // namespace kiln::cpu
