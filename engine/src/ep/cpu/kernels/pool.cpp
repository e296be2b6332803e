// Pooling kernels: MaxPool (with Indices), AveragePool, LpPool over 1-3 spatial dims; GlobalAveragePool,
// GlobalMaxPool, GlobalLpPool over any rank; MaxUnpool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ops/window_geometry.h"

namespace kiln::cpu {
namespace {

// A pooling geometry padded to three spatial dims (missing leading dims have size 1), plus, per axis and
// output position, the first input index of the window and its tap ranges: valid taps [lo, hi) lie inside the
// input, taps [0, padHi) inside the padded input (what count_include_pad divides by).
struct Pool3d {
  int64_t in[3], out[3], dil[3];
  std::vector<int64_t> start[3], lo[3], hi[3], padHi[3];
};

Pool3d makePool3d(const ops::WindowGeometry& g) {
  Pool3d p;
  const size_t offset = 3 - g.rank();
  for (size_t a = 0; a < 3; ++a) {
    const bool real = a >= offset;
    const size_t d = real ? a - offset : 0;
    p.in[a] = real ? g.in[d] : 1;
    p.out[a] = real ? g.out[d] : 1;
    p.dil[a] = real ? g.dilations[d] : 1;
    const int64_t k = real ? g.kernel[d] : 1, s = real ? g.strides[d] : 1;
    const int64_t pb = real ? g.padBegin[d] : 0, pe = real ? g.padEnd[d] : 0;
    for (int64_t o = 0; o < p.out[a]; ++o) {
      const int64_t start = o * s - pb;
      const int64_t lo = std::max<int64_t>(0, ops::ceilDiv(-start, p.dil[a]));
      const int64_t hi = std::min<int64_t>(k, ops::floorDiv(p.in[a] - 1 - start, p.dil[a]) + 1);
      p.start[a].push_back(start);
      p.lo[a].push_back(lo);
      p.hi[a].push_back(std::max(lo, hi));
      p.padHi[a].push_back(std::clamp<int64_t>(ops::floorDiv(p.in[a] + pe - 1 - start, p.dil[a]) + 1, 0, k));
    }
  }
  return p;
}

// Runs `reducer` over every window of one [in0, in1, in2] plane; reducer.add(value, i0, i1, i2) per valid
// tap, then reducer.finish(o, validCount, paddedCount) with the flat output index.
template <class T, class Reducer>
void poolPlane(const T* x, const Pool3d& p, Reducer& reducer) {
  for (int64_t o0 = 0, o = 0; o0 < p.out[0]; ++o0) {
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++o) {
        reducer.begin();
        for (int64_t k0 = p.lo[0][o0]; k0 < p.hi[0][o0]; ++k0) {
          const int64_t i0 = p.start[0][o0] + k0 * p.dil[0];
          for (int64_t k1 = p.lo[1][o1]; k1 < p.hi[1][o1]; ++k1) {
            const int64_t i1 = p.start[1][o1] + k1 * p.dil[1];
            const T* row = x + (i0 * p.in[1] + i1) * p.in[2];
            for (int64_t k2 = p.lo[2][o2]; k2 < p.hi[2][o2]; ++k2) {
              const int64_t i2 = p.start[2][o2] + k2 * p.dil[2];
              reducer.add(static_cast<ComputeType<T>>(row[i2]), i0, i1, i2);
            }
          }
        }
        const int64_t valid =
            (p.hi[0][o0] - p.lo[0][o0]) * (p.hi[1][o1] - p.lo[1][o1]) * (p.hi[2][o2] - p.lo[2][o2]);
        reducer.finish(o, valid, p.padHi[0][o0] * p.padHi[1][o1] * p.padHi[2][o2]);
      }
    }
  }
}

template <class T>
struct MaxReducer {
  using C = ComputeType<T>;
  T* y;
  int64_t* indices;   // nullptr when the Indices output is not requested
  int64_t indexBase;  // flat offset of this plane in the input
  bool columnMajor;
  const Pool3d* p;
  C best{};
  int64_t b0 = 0, b1 = 0, b2 = 0;  // position of the maximum
  bool any = false;
  void begin() { any = false; }
  void add(C v, int64_t i0, int64_t i1, int64_t i2) {
    if (!any || v > best) {
      best = v;
      b0 = i0, b1 = i1, b2 = i2;
      any = true;
    }
  }
  void finish(int64_t o, int64_t, int64_t) {
    y[o] = any ? T(best) : T(std::numeric_limits<C>::lowest());
    if (!indices) return;
    const int64_t local = !any          ? 0
                          : columnMajor ? b2 * p->in[1] * p->in[0] + b1 * p->in[0] + b0
                                        : (b0 * p->in[1] + b1) * p->in[2] + b2;
    indices[o] = indexBase + local;
  }
};

// The 2x2, stride 2 max pool of U-Nets (no dilation, no leading pads, every window starting inside the image) on
// float planes without Indices: the generic loop's taps in its order (row by row), each kept when greater than the
// maximum so far, so NaNs and ties give its bits.
bool isPlainMaxPool2x2(const ops::WindowGeometry& g) {
  if (g.rank() != 2) return false;
  for (size_t d = 0; d < 2; ++d) {
    if (g.kernel[d] != 2 || g.strides[d] != 2 || g.dilations[d] != 1 || g.padBegin[d] != 0) return false;
    if (2 * (g.out[d] - 1) >= g.in[d]) return false;
  }
  return true;
}

inline float keepGreater(float best, float v) { return v > best ? v : best; }

void maxPool2x2Plane(const float* x, int64_t inRows, int64_t inCols, float* y, int64_t outRows, int64_t outCols) {
  const int64_t pairs = std::min(outCols, inCols / 2);  // output columns whose window has two columns
  for (int64_t o1 = 0; o1 < outRows; ++o1) {
    const float* r0 = x + 2 * o1 * inCols;
    const float* r1 = 2 * o1 + 1 < inRows ? r0 + inCols : nullptr;
    float* out = y + o1 * outCols;
    if (r1) {
      for (int64_t o2 = 0; o2 < pairs; ++o2) {
        float best = r0[2 * o2];
        best = keepGreater(best, r0[2 * o2 + 1]);
        best = keepGreater(best, r1[2 * o2]);
        out[o2] = keepGreater(best, r1[2 * o2 + 1]);
      }
      if (pairs < outCols) out[pairs] = keepGreater(r0[2 * pairs], r1[2 * pairs]);
    } else {
      for (int64_t o2 = 0; o2 < pairs; ++o2) out[o2] = keepGreater(r0[2 * o2], r0[2 * o2 + 1]);
      if (pairs < outCols) out[pairs] = r0[2 * pairs];
    }
  }
}

template <class T>
struct AverageReducer {
  T* y;
  bool countIncludePad;
  ComputeType<T> sum{};
  void begin() { sum = 0; }
  void add(ComputeType<T> v, int64_t, int64_t, int64_t) { sum += v; }
  void finish(int64_t o, int64_t valid, int64_t padded) {
    const int64_t count = countIncludePad ? padded : valid;
    y[o] = T(count > 0 ? sum / static_cast<ComputeType<T>>(count) : ComputeType<T>(0));
  }
};

template <class T>
struct LpReducer {
  T* y;
  double p;
  double sum = 0;
  void begin() { sum = 0; }
  void add(ComputeType<T> v, int64_t, int64_t, int64_t) {
    const double a = std::fabs(static_cast<double>(v));
    sum += p == 2.0 ? a * a : p == 1.0 ? a : std::pow(a, p);
  }
  void finish(int64_t o, int64_t, int64_t) {
    y[o] = T(static_cast<ComputeType<T>>(p == 2.0   ? std::sqrt(sum)
                                         : p == 1.0 ? sum
                                                    : std::pow(sum, 1.0 / p)));
  }
};

enum class PoolKind { kMax, kAverage, kLp };

// The p attribute: a float in LpPool/GlobalLpPool-1, an int from opset 2.
double readP(const ir::Node& node) {
  const ir::Attribute* a = node.attribute("p");
  if (!a) return 2.0;
  return a->type == ir::AttributeType::FLOAT ? a->f : static_cast<double>(a->i);
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const KernelInfo& info, PoolKind kind)
      : node_(info.node),
        kind_(kind),
        attrs_(ops::WindowAttributes::read(info.node)),
        storageOrder_(info.node.attrInt("storage_order", 0)),
        countIncludePad_(info.node.attrInt("count_include_pad", 0) != 0),
        p_(readP(info.node)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input X is required");
    if (x->rank() < 3) {
      return invalidArgument("X must be [N, C, spatial...], got " + shapeToString(x->shape()));
    }
    const size_t R = x->rank() - 2;
    if (R > 3) return notImplemented("pooling over more than 3 spatial dimensions");
    if (attrs_.kernelShape.size() != R) {
      return invalidArgument("kernel_shape must have one value per spatial dimension");
    }
    if (kind_ == PoolKind::kLp && p_ <= 0) return invalidArgument("p must be positive");
    const std::vector<int64_t> spatial(x->shape().begin() + 2, x->shape().end());
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::resolveForwardWindow(attrs_, spatial, attrs_.kernelShape));
    Shape outShape = {x->dim(0), x->dim(1)};
    outShape.insert(outShape.end(), g.out.begin(), g.out.end());
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    int64_t* indices = nullptr;
    if (kind_ == PoolKind::kMax && ctx.outputCount() > 1 && node_.outputs.size() > 1 &&
        !node_.outputs[1].empty()) {
      indices = ctx.allocateOutput(1, DataType::INT64, outShape).data<int64_t>();
    }
    const Pool3d p = makePool3d(g);
    const bool plain2x2 = kind_ == PoolKind::kMax && !indices && isPlainMaxPool2x2(g);
    const int64_t planes = x->dim(0) * x->dim(1), inSize = g.inSize(), outSize = g.outSize();
    auto run = [&]<class T>() {
      const T* xd = x->data<T>();
      T* yd = y.data<T>();
      // Planes are independent: split over the session's threads (a few planes per task keep small ones inline).
      const int64_t grain = std::max<int64_t>(1, kMinPoolTaskElements / std::max<int64_t>(1, inSize));
      parallelFor(pool_, planes, grain, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* xp = xd + plane * inSize;
          if constexpr (std::is_same_v<T, float>) {
            if (plain2x2) {
              maxPool2x2Plane(xp, g.in[0], g.in[1], yd + plane * outSize, g.out[0], g.out[1]);
              continue;
            }
          }
          if (kind_ == PoolKind::kMax) {
            MaxReducer<T> r{.y = yd + plane * outSize,
                            .indices = indices ? indices + plane * outSize : nullptr,
                            .indexBase = plane * inSize,
                            .columnMajor = storageOrder_ != 0,
                            .p = &p};
            poolPlane<T>(xp, p, r);
          } else if (kind_ == PoolKind::kAverage) {
            AverageReducer<T> r{.y = yd + plane * outSize, .countIncludePad = countIncludePad_};
            poolPlane<T>(xp, p, r);
          } else {
            LpReducer<T> r{.y = yd + plane * outSize, .p = p_};
            poolPlane<T>(xp, p, r);
          }
        }
      });
      return Status::ok();
    };
    if (kind_ == PoolKind::kMax) {
      return dispatchType<float, double, Float16, BFloat16, int8_t, uint8_t>(x->dtype(), run);
    }
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), run);
  }

 private:
  const ir::Node& node_;
  PoolKind kind_;
  ops::WindowAttributes attrs_;
  int64_t storageOrder_;
  bool countIncludePad_;
  double p_;
  ThreadPool* pool_;
  // Input elements below which a pooling task is not worth a thread.
  static constexpr int64_t kMinPoolTaskElements = 16384;
};

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: one value per (n, c) over all spatial positions.
class GlobalPoolKernel : public Kernel {
 public:
  GlobalPoolKernel(const KernelInfo& info, PoolKind kind) : kind_(kind), p_(readP(info.node)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input X is required");
    if (x->rank() < 2) return invalidArgument("X must be [N, C, ...], got " + shapeToString(x->shape()));
    Shape outShape = x->shape();
    std::fill(outShape.begin() + 2, outShape.end(), 1);
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    const int64_t planes = x->dim(0) * x->dim(1);
    const int64_t size = planes == 0 ? 0 : x->numel() / planes;
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      const T* xd = x->data<T>();
      T* yd = y.data<T>();
      for (int64_t plane = 0; plane < planes; ++plane) {
        const T* xp = xd + plane * size;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          if (kind_ == PoolKind::kAverage) {
            yd[plane] = size > 0 ? sumPlane(xp, size) / static_cast<T>(size) : T(0);
            continue;
          }
        }
        yd[plane] = T(static_cast<ComputeType<T>>(reducePlane(xp, size)));
      }
      return Status::ok();
    });
  }

 private:
  // Eight independent partial sums: vectorizable without -ffast-math and more accurate than one running sum.
  template <class T>
  static T sumPlane(const T* x, int64_t n) {
    T acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
    }
    for (; i < n; ++i) acc[i & 7] += x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }

  template <class T>
  double reducePlane(const T* x, int64_t n) const {
    if (kind_ == PoolKind::kMax) {
      double best = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i) {
        best = std::max(best, static_cast<double>(static_cast<ComputeType<T>>(x[i])));
      }
      return best;
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(static_cast<ComputeType<T>>(x[i]));
      sum += kind_ == PoolKind::kAverage ? v : p_ == 2.0 ? v * v : std::pow(std::fabs(v), p_);
    }
    if (kind_ == PoolKind::kAverage) return n > 0 ? sum / static_cast<double>(n) : 0.0;
    return p_ == 2.0 ? std::sqrt(sum) : std::pow(sum, 1.0 / p_);
  }

  PoolKind kind_;
  double p_;
};

// MaxUnpool: scatters X into zeros at the flat positions in I. The positions refer to the unpooled shape
// inferred from the attributes; a larger output_shape keeps each element's coordinates (ONNX reference).
class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(const KernelInfo& info) : attrs_(ops::WindowAttributes::read(info.node)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    if (!x || !ind) return invalidArgument("inputs X and I are required");
    if (x->rank() < 3) return invalidArgument("X must be [N, C, spatial...]");
    if (ind->dtype() != DataType::INT64 || ind->shape() != x->shape()) {
      return invalidArgument("I must be int64 with X's shape");
    }
    const size_t R = x->rank() - 2;
    std::vector<int64_t> kernel = attrs_.kernelShape, strides = attrs_.strides, pads = attrs_.pads;
    if (kernel.size() != R) return invalidArgument("kernel_shape must have one value per spatial dimension");
    KILN_RETURN_IF_ERROR(ops::expandWindowAttribute("strides", strides, R, 1, 1));
    KILN_RETURN_IF_ERROR(ops::expandWindowAttribute("pads", pads, 2 * R, 0, 0));
    Shape inferred = {x->dim(0), x->dim(1)};
    for (size_t d = 0; d < R; ++d) {
      inferred.push_back((x->dim(d + 2) - 1) * strides[d] + kernel[d] - pads[d] - pads[R + d]);
      if (inferred.back() < 0) return invalidArgument("attributes give a negative output size");
    }
    Shape outShape = inferred;
    if (const Tensor* shapeInput = ctx.input(2)) {
      KILN_ASSIGN_OR_RETURN(outShape, readInt64Values(*shapeInput));
      if (outShape.size() != inferred.size()) return invalidArgument("output_shape must have the rank of X");
      for (size_t d = 0; d < outShape.size(); ++d) {
        if (outShape[d] < inferred[d]) {
          return invalidArgument("output_shape " + shapeToString(outShape) + " is smaller than " +
                                 shapeToString(inferred));
        }
      }
    }
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    const int64_t total = shapeSize(inferred);
    const std::vector<int64_t> inferredStrides = stridesOf(inferred), outStrides = stridesOf(outShape);
    const size_t elementSize = dataTypeSize(x->dtype());
    const auto* src = static_cast<const std::byte*>(x->rawData());
    auto* dst = static_cast<std::byte*>(y.rawData());
    const int64_t* id = ind->data<int64_t>();
    for (int64_t i = 0, n = x->numel(); i < n; ++i) {
      if (id[i] < 0 || id[i] >= total) {
        return invalidArgument("index " + std::to_string(id[i]) + " is out of range");
      }
      int64_t target = 0;
      for (size_t d = 0, rest = static_cast<size_t>(id[i]); d < inferred.size(); ++d) {
        target += static_cast<int64_t>(rest / inferredStrides[d]) * outStrides[d];
        rest %= inferredStrides[d];
      }
      std::memcpy(dst + target * elementSize, src + i * elementSize, elementSize);
    }
    return Status::ok();
  }

 private:
  ops::WindowAttributes attrs_;
};

template <PoolKind kKind>
KernelFactory poolFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new PoolKernel(info, kKind));
  };
}

template <PoolKind kKind>
KernelFactory globalPoolFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new GlobalPoolKernel(info, kKind));
  };
}

}  // namespace

void registerPoolKernels(KernelRegistry& registry) {
  registry.add("MaxPool", 1, kAnyOpset, poolFactory<PoolKind::kMax>());
  registry.add("AveragePool", 1, kAnyOpset, poolFactory<PoolKind::kAverage>());
  registry.add("LpPool", 1, kAnyOpset, poolFactory<PoolKind::kLp>());
  registry.add("GlobalMaxPool", 1, kAnyOpset, globalPoolFactory<PoolKind::kMax>());
  registry.add("GlobalAveragePool", 1, kAnyOpset, globalPoolFactory<PoolKind::kAverage>());
  registry.add("GlobalLpPool", 1, kAnyOpset, globalPoolFactory<PoolKind::kLp>());
  registry.add("MaxUnpool", 9, kAnyOpset, makeFactory<MaxUnpoolKernel>());
}

}  // namespace kiln::cpu
