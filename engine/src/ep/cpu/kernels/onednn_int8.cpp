// oneDNN int8 convolution and matmul (see onednn_int8.h for the algebra that keeps them bit-identical to the
// reference loops). oneDNN's C++ API reports failures by throwing dnnl::error: every call into it is wrapped here and
// a failure means "not handled", so the kernels fall back to the reference loops and Kiln itself never throws.
#include "ep/cpu/kernels/onednn_int8.h"

#include "ep/cpu/kernels/onednn_common.h"

#include <algorithm>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using namespace onednn;  // NOLINT: the shared helpers read as this file's own

// Output positions per task of the conv's layout pass (NHWC int32 from oneDNN to NCHW with compensation).
constexpr int64_t kPositionsPerTask = 256;

memory::format_tag channelsLastTag(size_t spatialRank) {
  return spatialRank == 1 ? memory::format_tag::nwc : spatialRank == 2 ? memory::format_tag::nhwc
                                                                        : memory::format_tag::ndhwc;
}
memory::data_type int8TypeOf(DataType t) { return t == DataType::UINT8 ? memory::data_type::u8 : memory::data_type::s8; }

// The value of a per-tensor zero point of x (0 when absent); false when it is not one value of x's type.
bool perTensorZeroPoint(const Tensor& x, const Tensor* zero, int32_t& value) {
  value = 0;
  if (!zero || zero->numel() == 0) return true;
  if (zero->dtype() != x.dtype() || zero->numel() != 1) return false;
  value = x.dtype() == DataType::UINT8 ? int32_t(zero->data<uint8_t>()[0]) : int32_t(zero->data<int8_t>()[0]);
  return true;
}

// The constant weights as s8 (w - c, elementwise) and the per-slice compensation factors c - zw; false when w or its
// zero point has the wrong type or count. `slices` counts the zero point's values when it is not per tensor (output
// channels M for a conv, columns N for a matmul).
bool shiftWeights(const Tensor& w, const Tensor* zero, int64_t slices, std::vector<int8_t>& shifted,
                  std::vector<int32_t>& correction) {
  if (w.dtype() != DataType::UINT8 && w.dtype() != DataType::INT8) return false;
  const int64_t zeroCount = zero ? zero->numel() : 0;
  if (zero && (zero->dtype() != w.dtype() || (zeroCount != 1 && zeroCount != slices))) return false;
  const bool isUnsigned = w.dtype() == DataType::UINT8;
  const int32_t c = isUnsigned ? 128 : 0;
  correction.assign(static_cast<size_t>(slices), c);
  for (int64_t i = 0; i < slices && zero; ++i) {
    const int64_t zi = zeroCount == 1 ? 0 : i;
    correction[i] = c - (isUnsigned ? int32_t(zero->data<uint8_t>()[zi]) : int32_t(zero->data<int8_t>()[zi]));
  }
  const int64_t n = w.numel();
  shifted.resize(static_cast<size_t>(n));
  if (isUnsigned) {
    const uint8_t* src = w.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) shifted[i] = static_cast<int8_t>(int32_t(src[i]) - 128);
  } else {
    std::copy_n(w.data<int8_t>(), n, shifted.begin());
  }
  return true;
}

bool anyNonZero(const std::vector<int32_t>& v) {
  return std::any_of(v.begin(), v.end(), [](int32_t x) { return x != 0; });
}

// a + b * c + d with int32 wrap-around, as the reference's int32 accumulation gives.
inline int32_t wrapMulAdd(int32_t a, int32_t b, int32_t c, int32_t d) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b) * static_cast<uint32_t>(c) +
                              static_cast<uint32_t>(d));
}

// Weights packed into a primitive's layout, shared by the plans whose primitives want that layout.
struct PackedWeights {
  memory::desc desc;
  memory data;
};

// Returns the packed weights in `desc`'s layout, packing them the first time that layout is asked for: `source` (the
// constant weight tensor, whose storage the session keeps) is shifted to s8 and laid out as `plainDesc` only for that
// moment, so no plain copy stays in memory.
const memory& packedFor(std::vector<PackedWeights>& packs, const Tensor& source, const memory::desc& plainDesc,
                        const memory::desc& desc, const dnnl::engine& engine) {
  for (const PackedWeights& p : packs) {
    if (p.desc == desc) return p.data;
  }
  std::vector<int8_t> shifted;
  std::vector<int32_t> unused;
  shiftWeights(source, nullptr, 1, shifted, unused);  // checked in create()
  memory plain(plainDesc, engine, shifted.data());
  memory packed(desc, engine);
  dnnl::stream stream(engine);
  dnnl::reorder(plain, packed).execute(stream, plain, packed);
  stream.wait();
  packs.push_back({desc, packed});
  return packs.back().data;
}

// out[i] = sum over `count` channels from `first` of (x[c][i] - zx), for planes of `size` elements.
template <class T>
void sumChannels(const T* x, int64_t first, int64_t count, int32_t zx, int64_t size, int32_t* out) {
  std::fill_n(out, size, -static_cast<int32_t>(count) * zx);
  for (int64_t c = first; c < first + count; ++c) {
    const T* row = x + c * size;
    for (int64_t i = 0; i < size; ++i) out[i] += row[i];
  }
}

// sums[p] = sum over the window taps of output position p that fall inside the image of image[tap]: the window sums of
// a convolution with an all-ones kernel, taps in the padding counting 0. Works a line (last dim) at a time.
void windowSums(const int32_t* image, const ops::WindowGeometry& g, int32_t* sums) {
  const size_t R = g.rank();
  const int64_t outW = g.out[R - 1], inW = g.in[R - 1], sW = g.strides[R - 1], lines = g.outSize() / outW;
  const ops::SpatialIndex inStrides = g.inStrides();
  int64_t taps = 1;  // taps over the leading dims
  for (size_t d = 0; d + 1 < R; ++d) taps *= g.kernel[d];
  std::fill_n(sums, g.outSize(), 0);
  for (int64_t line = 0; line < lines; ++line) {
    ops::SpatialIndex o{};
    for (int64_t d = static_cast<int64_t>(R) - 2, rest = line; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    int32_t* out = sums + line * outW;
    for (int64_t t = 0; t < taps; ++t) {
      bool inside = true;
      int64_t offset = 0;
      for (int64_t d = static_cast<int64_t>(R) - 2, rest = t; d >= 0 && inside; --d) {
        const int64_t k = rest % g.kernel[d];
        rest /= g.kernel[d];
        const int64_t i = o[d] * g.strides[d] - g.padBegin[d] + k * g.dilations[d];
        inside = i >= 0 && i < g.in[d];
        offset += i * inStrides[d];
      }
      if (!inside) continue;
      const int32_t* row = image + offset;
      for (int64_t kw = 0; kw < g.kernel[R - 1]; ++kw) {
        const int64_t shift = kw * g.dilations[R - 1] - g.padBegin[R - 1];
        int64_t lo = 0, hi = 0;
        ops::validRange(shift, sW, inW, outW, lo, hi);
        for (int64_t ow = lo; ow < hi; ++ow) out[ow] += row[ow * sW + shift];
      }
    }
  }
}

// out [N, P, C] = x [N, C, P] for bytes, in tiles of positions small enough for the cache (oneDNN 2.6's u8 reorder for
// this transpose measured about 20x slower on the IS-Net layers).
void toChannelsLast(const uint8_t* x, int64_t N, int64_t C, int64_t P, uint8_t* out, ThreadPool* pool) {
  constexpr int64_t kTile = 64;
  const int64_t tiles = (P + kTile - 1) / kTile;
  parallelFor(pool, N * tiles, 4, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / tiles, p0 = task % tiles * kTile, p1 = std::min(P, p0 + kTile);
      const uint8_t* src = x + n * C * P;
      uint8_t* dst = out + n * P * C;
      for (int64_t c = 0; c < C; ++c) {
        const uint8_t* row = src + c * P;
        for (int64_t p = p0; p < p1; ++p) dst[p * C + c] = row[p];
      }
    }
  });
}

}  // namespace

bool oneDnnInt8Exact() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  // The VNNI bits of dnnl_cpu_isa_avx512_core_vnni (0x40) and dnnl_cpu_isa_avx2_vnni (0x400); the ISAs above them
  // (bf16, amx) include the first.
  return cpuEngine() != nullptr && (isa & 0x440u) != 0;
}

std::string oneDnnIsaName() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Convolution

struct OneDnnInt8Conv::State {
  ops::WindowAttributes attrs;
  int64_t group = 1, M = 0, Mg = 0, Cg = 0;
  bool corrected = false;  // some c - zw[m] is not 0: the window sums S are needed
  std::vector<int64_t> kernel;
  std::vector<int32_t> correction;  // c - zw[m] per output channel
  Tensor weights;                   // the constant w (shared storage)
  memory::desc plainDesc;           // w - c as s8 [G, Mg, Cg, kernel...]
  std::vector<PackedWeights> packs;

  struct Plan {
    DataType xType;
    Shape xShape;
    bool usable = false;
    dnnl::convolution_forward conv;
    memory::desc userSrc, convSrc, convDst;
    memory weights;
  };
  std::mutex mutex;
  std::vector<std::shared_ptr<Plan>> plans;
  std::string lastImplementation;

  // The plan for x's type and shape with geometry g, created (and its weights packed) on first use.
  std::shared_ptr<Plan> planFor(DataType xType, const Shape& xShape, const ops::WindowGeometry& g);
};

std::shared_ptr<OneDnnInt8Conv::State::Plan> OneDnnInt8Conv::State::planFor(DataType xType, const Shape& xShape,
                                                                             const ops::WindowGeometry& g) {
  std::lock_guard lock(mutex);
  for (const auto& p : plans) {
    if (p->xType == xType && p->xShape == xShape) return p;
  }
  auto plan = std::make_shared<Plan>();
  plan->xType = xType;
  plan->xShape = xShape;
  try {
    const dnnl::engine& engine = *cpuEngine();
    const size_t R = g.rank();
    memory::dims src{xShape[0], xShape[1]}, dst{xShape[0], group * Mg}, wei{group, Mg, Cg}, strides, dilates, padL,
        padR;
    for (size_t d = 0; d < R; ++d) {
      src.push_back(g.in[d]);
      dst.push_back(g.out[d]);
      wei.push_back(g.kernel[d]);
      strides.push_back(g.strides[d]);
      dilates.push_back(g.dilations[d] - 1);
      padL.push_back(g.padBegin[d]);
      padR.push_back(g.padEnd[d]);
    }
    const memory::data_type srcType = int8TypeOf(xType);
    plan->userSrc = memory::desc(src, srcType, plainActivationTag(R));
    plan->convSrc = memory::desc(src, srcType, channelsLastTag(R));
    plan->convDst = memory::desc(dst, memory::data_type::s32, channelsLastTag(R));
    const memory::desc anyWeights(wei, memory::data_type::s8, memory::format_tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         plan->convSrc, anyWeights, plan->convDst, strides, dilates, padL, padR);
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
    lastImplementation = pd.impl_info_str();
    if (!isReferenceImplementation(lastImplementation)) {
      plan->weights = packedFor(packs, weights, plainDesc, pd.weights_desc(), engine);
      plan->conv = dnnl::convolution_forward(pd);
      plan->usable = true;
    }
  } catch (const dnnl::error& e) {
    lastImplementation = std::string("unavailable: ") + e.what();
    plan->usable = false;
  }
  rememberPlan(plans, plan);
  return plan;
}

OneDnnInt8Conv::OneDnnInt8Conv(std::unique_ptr<State> state) : state_(std::move(state)) {}
OneDnnInt8Conv::~OneDnnInt8Conv() = default;

std::unique_ptr<OneDnnInt8Conv> OneDnnInt8Conv::create(const ops::WindowAttributes& attrs, int64_t group,
                                                       const Tensor& w, const Tensor* wZero) {
  if (!oneDnnInt8Exact() || w.rank() < 3 || w.rank() > 5 || group <= 0 || w.dim(0) % group != 0) return nullptr;
  auto state = std::make_unique<State>();
  State& s = *state;
  s.attrs = attrs;
  s.group = group;
  s.M = w.dim(0);
  s.Mg = s.M / group;
  s.Cg = w.dim(1);
  s.kernel.assign(w.shape().begin() + 2, w.shape().end());
  if (s.M == 0 || s.Cg == 0 || w.numel() == 0) return nullptr;
  std::vector<int8_t> shifted;
  if (!shiftWeights(w, wZero, s.M, shifted, s.correction)) return nullptr;
  s.weights = w;
  s.corrected = anyNonZero(s.correction);
  try {
    memory::dims wei{group, s.Mg, s.Cg};
    wei.insert(wei.end(), s.kernel.begin(), s.kernel.end());
    s.plainDesc = memory::desc(wei, memory::data_type::s8, plainWeightsTag(s.kernel.size()));
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<OneDnnInt8Conv>(new OneDnnInt8Conv(std::move(state)));
}

void OneDnnInt8Conv::prepare(DataType xType, const Shape& xShape, ThreadPool* pool) {
  State& st = *state_;
  if ((xType != DataType::UINT8 && xType != DataType::INT8) || xShape.size() != st.kernel.size() + 2) return;
  if (xShape[1] != st.Cg * st.group || shapeSize(xShape) == 0) return;
  const std::vector<int64_t> spatial(xShape.begin() + 2, xShape.end());
  auto geometry = ops::resolveForwardWindow(st.attrs, spatial, st.kernel);
  if (!geometry.isOk() || geometry->outSize() == 0) return;
  // oneDNN sizes a primitive's work split for the thread count current when it is created: the run's count.
  setThreads(pool, xShape[0] * geometry->outSize() * st.M * st.Cg * geometry->kernelSize());
  st.planFor(xType, xShape, *geometry);
}

size_t OneDnnInt8Conv::planCount() const {
  std::lock_guard lock(state_->mutex);
  return state_->plans.size();
}

std::string OneDnnInt8Conv::implementation() const {
  std::lock_guard lock(state_->mutex);
  return state_->lastImplementation;
}

bool OneDnnInt8Conv::run(const Tensor& x, const Tensor* xZero, const int32_t* bias, const ConvShapes& s, int32_t* y,
                         ThreadPool* pool) {
  State& st = *state_;
  int32_t zx = 0;
  if ((x.dtype() != DataType::UINT8 && x.dtype() != DataType::INT8) || !perTensorZeroPoint(x, xZero, zx)) return false;
  if (s.M != st.M || s.C != st.Cg * st.group || s.geometry.rank() != st.kernel.size()) return false;
  const int64_t P = s.geometry.outSize();
  if (s.N == 0 || P == 0) return false;
  // oneDNN fixes a primitive's thread count when it creates it: set the run's count before a plan is made.
  setThreads(pool, s.N * P * s.M * st.Cg * s.geometry.kernelSize());
  std::shared_ptr<State::Plan> plan = st.planFor(x.dtype(), x.shape(), s.geometry);
  if (!plan->usable) return false;
  std::unique_ptr<int32_t[]> acc(new int32_t[static_cast<size_t>(s.N * P * s.M)]);
  try {
    const dnnl::engine& engine = *cpuEngine();
    dnnl::stream stream(engine);
    memory user(plan->userSrc, engine, const_cast<void*>(x.rawData()));
    memory src = user;
    std::unique_ptr<uint8_t[]> channelsLast;
    if (s.C > 1) {
      channelsLast.reset(new uint8_t[static_cast<size_t>(x.numel())]);
      toChannelsLast(static_cast<const uint8_t*>(x.rawData()), s.N, s.C, s.geometry.inSize(), channelsLast.get(), pool);
      src = memory(plan->convSrc, engine, channelsLast.get());
    }
    memory dst(plan->convDst, engine, acc.get());
    memory zero({{1}, memory::data_type::s32, memory::format_tag::x}, engine, &zx);
    plan->conv.execute(stream, {{DNNL_ARG_SRC, src},
                                {DNNL_ARG_WEIGHTS, plan->weights},
                                {DNNL_ARG_DST, dst},
                                {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
    stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  std::vector<int32_t> sums;  // S [N, group, P]
  if (st.corrected) {
    sums.resize(static_cast<size_t>(s.N * st.group * P));
    parallelFor(pool, s.N * st.group, 1, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> channelSum(static_cast<size_t>(s.geometry.inSize()));
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t firstChannel = plane * st.Cg;  // (n * group + g) * Cg = n * C + g * Cg
        if (x.dtype() == DataType::UINT8) {
          sumChannels(x.data<uint8_t>(), firstChannel, st.Cg, zx, s.geometry.inSize(), channelSum.data());
        } else {
          sumChannels(x.data<int8_t>(), firstChannel, st.Cg, zx, s.geometry.inSize(), channelSum.data());
        }
        windowSums(channelSum.data(), s.geometry, sums.data() + plane * P);
      }
    });
  }
  // NHWC to NCHW, adding (c - zw[m]) * S and the bias.
  const int64_t tasksPerImage = (P + kPositionsPerTask - 1) / kPositionsPerTask;
  parallelFor(pool, s.N * tasksPerImage, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / tasksPerImage, p0 = task % tasksPerImage * kPositionsPerTask,
                    p1 = std::min(P, p0 + kPositionsPerTask);
      const int32_t* a = acc.get() + n * P * s.M;
      for (int64_t m = 0; m < s.M; ++m) {
        const int32_t corr = st.correction[m], b = bias ? bias[m] : 0;
        int32_t* out = y + (n * s.M + m) * P;
        if (st.corrected && corr != 0) {
          const int32_t* sum = sums.data() + (n * st.group + m / st.Mg) * P;
          for (int64_t p = p0; p < p1; ++p) out[p] = wrapMulAdd(a[p * s.M + m], corr, sum[p], b);
        } else {
          for (int64_t p = p0; p < p1; ++p) out[p] = wrapMulAdd(a[p * s.M + m], 0, 0, b);
        }
      }
    }
  });
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// MatMul

struct OneDnnInt8MatMul::State {
  int64_t K = 0, N = 0;
  std::vector<int32_t> correction;  // c - zb[n] per column
  bool corrected = false;
  Tensor weights;          // the constant b (shared storage)
  memory::desc plainDesc;  // b - c as s8 [K, N]
  std::vector<PackedWeights> packs;

  struct Plan {
    DataType aType;
    int64_t rows = 0;
    bool usable = false;
    dnnl::matmul matmul;
    memory::desc src, dst;
    memory weights;
  };
  std::mutex mutex;
  std::vector<std::shared_ptr<Plan>> plans;
  std::string lastImplementation;

  std::shared_ptr<Plan> planFor(DataType aType, int64_t rows);
};

std::shared_ptr<OneDnnInt8MatMul::State::Plan> OneDnnInt8MatMul::State::planFor(DataType aType, int64_t rows) {
  std::lock_guard lock(mutex);
  for (const auto& p : plans) {
    if (p->aType == aType && p->rows == rows) return p;
  }
  auto plan = std::make_shared<Plan>();
  plan->aType = aType;
  plan->rows = rows;
  try {
    const dnnl::engine& engine = *cpuEngine();
    plan->src = memory::desc({rows, K}, int8TypeOf(aType), memory::format_tag::ab);
    plan->dst = memory::desc({rows, N}, memory::data_type::s32, memory::format_tag::ab);
    const memory::desc anyWeights({K, N}, memory::data_type::s8, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plan->src, anyWeights, plan->dst), attr, engine);
    lastImplementation = pd.impl_info_str();
    if (!isReferenceImplementation(lastImplementation)) {
      plan->weights = packedFor(packs, weights, plainDesc, pd.weights_desc(), engine);
      plan->matmul = dnnl::matmul(pd);
      plan->usable = true;
    }
  } catch (const dnnl::error& e) {
    lastImplementation = std::string("unavailable: ") + e.what();
    plan->usable = false;
  }
  rememberPlan(plans, plan);
  return plan;
}

OneDnnInt8MatMul::OneDnnInt8MatMul(std::unique_ptr<State> state) : state_(std::move(state)) {}
OneDnnInt8MatMul::~OneDnnInt8MatMul() = default;

std::unique_ptr<OneDnnInt8MatMul> OneDnnInt8MatMul::create(const Tensor& b, const Tensor* bZero) {
  if (!oneDnnInt8Exact() || b.rank() != 2 || b.dim(0) == 0 || b.dim(1) == 0) return nullptr;
  if (bZero && bZero->numel() > 1 && bZero->rank() != 1) return nullptr;
  auto state = std::make_unique<State>();
  State& s = *state;
  s.K = b.dim(0);
  s.N = b.dim(1);
  std::vector<int8_t> shifted;
  if (!shiftWeights(b, bZero, s.N, shifted, s.correction)) return nullptr;
  s.weights = b;
  s.corrected = anyNonZero(s.correction);
  try {
    s.plainDesc = memory::desc({s.K, s.N}, memory::data_type::s8, memory::format_tag::ab);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<OneDnnInt8MatMul>(new OneDnnInt8MatMul(std::move(state)));
}

void OneDnnInt8MatMul::prepare(DataType aType, const Shape& aShape, ThreadPool* pool) {
  State& st = *state_;
  if ((aType != DataType::UINT8 && aType != DataType::INT8) || aShape.size() < 2 || aShape.back() != st.K) return;
  const int64_t rows = shapeSize(aShape) / st.K;
  if (rows <= 0) return;
  setThreads(pool, rows * st.K * st.N);
  st.planFor(aType, rows);
}

size_t OneDnnInt8MatMul::planCount() const {
  std::lock_guard lock(state_->mutex);
  return state_->plans.size();
}

std::string OneDnnInt8MatMul::implementation() const {
  std::lock_guard lock(state_->mutex);
  return state_->lastImplementation;
}

bool OneDnnInt8MatMul::run(const Tensor& a, const Tensor* aZero, const MatMulPlan& plan, int32_t* y, ThreadPool* pool) {
  State& st = *state_;
  int32_t za = 0;
  if ((a.dtype() != DataType::UINT8 && a.dtype() != DataType::INT8) || !perTensorZeroPoint(a, aZero, za)) return false;
  if (plan.K != st.K || plan.N != st.N || shapeSize(plan.bBatch) != 1) return false;
  const int64_t rows = shapeSize(plan.aBatch) * plan.M;
  if (rows == 0) return false;
  setThreads(pool, rows * st.K * st.N);  // before the plan: a primitive keeps the count it was created with
  std::shared_ptr<State::Plan> p = st.planFor(a.dtype(), rows);
  if (!p->usable) return false;
  try {
    const dnnl::engine& engine = *cpuEngine();
    dnnl::stream stream(engine);
    memory src(p->src, engine, const_cast<void*>(a.rawData()));
    memory dst(p->dst, engine, y);
    memory zero({{1}, memory::data_type::s32, memory::format_tag::x}, engine, &za);
    p->matmul.execute(stream, {{DNNL_ARG_SRC, src},
                               {DNNL_ARG_WEIGHTS, p->weights},
                               {DNNL_ARG_DST, dst},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
    stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  if (!st.corrected) return true;
  // y[i, n] += (c - zb[n]) * sum_k (a[i, k] - za)
  const bool isUnsigned = a.dtype() == DataType::UINT8;
  parallelFor(pool, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int32_t rowSum = 0;
      if (isUnsigned) {
        const uint8_t* r = a.data<uint8_t>() + i * st.K;
        for (int64_t k = 0; k < st.K; ++k) rowSum += int32_t(r[k]) - za;
      } else {
        const int8_t* r = a.data<int8_t>() + i * st.K;
        for (int64_t k = 0; k < st.K; ++k) rowSum += int32_t(r[k]) - za;
      }
      int32_t* out = y + i * st.N;
      for (int64_t n = 0; n < st.N; ++n) out[n] = wrapMulAdd(out[n], st.correction[n], rowSum, 0);
    }
  });
  return true;
}

}  // namespace kiln::cpu
