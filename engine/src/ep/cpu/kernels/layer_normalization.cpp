// The normalizations over trailing or grouped axes: LayerNormalization (opset 17, with the optional Mean/InvStdDev
// outputs), RMSNormalization (opset 23), GroupNormalization (opset 18: scale/bias per group; 21: per channel) and
// MeanVarianceNormalization. Statistics accumulate in double whatever the element type.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/row_statistics.h"

namespace kiln::cpu {
namespace {

// For a tensor broadcast to `shape` with element strides `strides`, the flat element offset contributed by
// dims [from, to) for every index of those dims in row-major order.
std::vector<int64_t> partialOffsets(const Shape& shape, const std::vector<int64_t>& strides, size_t from,
                                    size_t to) {
  std::vector<int64_t> offsets(1, 0);
  for (size_t d = from; d < to; ++d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(shape[d]));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// Splits the offsets of `t` broadcast to `shape` into a part for dims [0, axis) and one for [axis, rank).
Status scaleOffsets(const Tensor& t, const Shape& shape, int64_t axis, std::vector<int64_t>& outerOffsets,
                    std::vector<int64_t>& innerOffsets) {
  auto b = broadcastShapes(shape, t.shape());
  if (!b.isOk() || b.value() != shape) {
    return invalidArgument("scale " + shapeToString(t.shape()) + " does not broadcast to X " + shapeToString(shape));
  }
  const std::vector<int64_t> strides = broadcastStrides(t.shape(), shape);
  outerOffsets = partialOffsets(shape, strides, 0, static_cast<size_t>(axis));
  innerOffsets = partialOffsets(shape, strides, static_cast<size_t>(axis), shape.size());
  return Status::ok();
}

bool outputRequested(const ir::Node& node, const KernelContext& ctx, size_t i) {
  return i < ctx.outputCount() && i < node.outputs.size() && !node.outputs[i].empty();
}

class LayerNormalizationKernel : public Kernel {
 public:
  explicit LayerNormalizationKernel(const KernelInfo& info)
      : node_(info.node),
        axis_(info.node.attrInt("axis", -1)),
        epsilon_(info.node.attrFloat("epsilon", 1e-5f)),
        stashType_(info.node.attrInt("stash_type", 1)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale) return invalidArgument("inputs X and Scale are required");
    if (x->rank() == 0) return invalidArgument("X must have rank >= 1");
    const int64_t rank = static_cast<int64_t>(x->rank());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank));
    const Shape& shape = x->shape();
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    const int64_t inner = outer == 0 ? 0 : x->numel() / outer;

    // Scale and B broadcast against X: split each one's offset into an outer and an inner part.
    std::vector<int64_t> scaleOuter, scaleInner, biasOuter, biasInner;
    KILN_RETURN_IF_ERROR(offsetsFor(*scale, shape, axis, scaleOuter, scaleInner));
    KILN_ASSIGN_OR_RETURN(std::vector<double> scaleValues, readDoubleValues(*scale));
    std::vector<double> biasValues;
    if (bias) {
      KILN_RETURN_IF_ERROR(offsetsFor(*bias, shape, axis, biasOuter, biasInner));
      KILN_ASSIGN_OR_RETURN(biasValues, readDoubleValues(*bias));
    }

    Shape statShape = shape;
    std::fill(statShape.begin() + axis, statShape.end(), 1);
    const DataType statType = stashType_ == 16 ? DataType::BFLOAT16 : DataType::FLOAT;
    Tensor* meanOut = outputRequested(node_, ctx, 1) ? &ctx.allocateOutput(1, statType, statShape) : nullptr;
    Tensor* invStdOut =
        outputRequested(node_, ctx, 2) ? &ctx.allocateOutput(2, statType, statShape) : nullptr;
    Tensor& y = ctx.allocateOutput(0, x->dtype(), shape);
    std::vector<double> means(outer), invStds(outer);
    Status status = dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      for (int64_t o = 0; o < outer && inner > 0; ++o) {
        const T* xp = x->data<T>() + o * inner;
        T* yp = y.data<T>() + o * inner;
        const auto [mean, invStd] = rowMoments(xp, inner, epsilon_);
        means[o] = mean;
        invStds[o] = invStd;
        const double* s = scaleValues.data() + scaleOuter[o];
        for (int64_t i = 0; i < inner; ++i) {
          double v = (static_cast<double>(static_cast<Cmp>(xp[i])) - mean) * invStd * s[scaleInner[i]];
          if (bias) v += biasValues[biasOuter[o] + biasInner[i]];
          yp[i] = T(static_cast<Cmp>(v));
        }
      }
      return Status::ok();
    });
    KILN_RETURN_IF_ERROR(status);
    for (int64_t o = 0; o < outer; ++o) {
      if (meanOut) writeStat(*meanOut, o, means[o]);
      if (invStdOut) writeStat(*invStdOut, o, invStds[o]);
    }
    return Status::ok();
  }

 private:
  Status offsetsFor(const Tensor& t, const Shape& shape, int64_t axis, std::vector<int64_t>& outerOffsets,
                    std::vector<int64_t>& innerOffsets) const {
    auto b = broadcastShapes(shape, t.shape());
    if (!b.isOk() || b.value() != shape) {
      return invalidArgument("Scale/B " + shapeToString(t.shape()) + " does not broadcast to X " +
                             shapeToString(shape));
    }
    const std::vector<int64_t> strides = broadcastStrides(t.shape(), shape);
    outerOffsets = partialOffsets(shape, strides, 0, static_cast<size_t>(axis));
    innerOffsets = partialOffsets(shape, strides, static_cast<size_t>(axis), shape.size());
    return Status::ok();
  }

  static void writeStat(Tensor& t, int64_t i, double v) {
    if (t.dtype() == DataType::BFLOAT16) {
      t.data<BFloat16>()[i] = BFloat16(static_cast<float>(v));
    } else {
      t.data<float>()[i] = static_cast<float>(v);
    }
  }

  const ir::Node& node_;
  int64_t axis_;
  float epsilon_;
  int64_t stashType_;
};

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes` (default [0, 2, 3]), as the
// ONNX function body defines it.
class MeanVarianceNormalizationKernel : public Kernel {
 public:
  explicit MeanVarianceNormalizationKernel(const KernelInfo& info)
      : axes_(info.node.attrInts("axes", {0, 2, 3})) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input X is required");
    const Shape& shape = x->shape();
    if (shape.empty()) return invalidArgument("X must have rank >= 1");
    Shape kept = shape;
    for (int64_t a : axes_) {
      auto axis = normalizeAxis(a, static_cast<int64_t>(shape.size()));
      if (!axis.isOk()) return invalidArgument(axis.status().message());
      kept[static_cast<size_t>(axis.value())] = 1;
    }
    const int64_t groups = shapeSize(kept);
    const double count = groups == 0 ? 0.0 : static_cast<double>(x->numel() / groups);
    Tensor& y = ctx.allocateOutput(0, x->dtype(), shape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      const T* xd = x->data<T>();
      T* yd = y.data<T>();
      std::vector<double> mean(static_cast<size_t>(groups), 0.0), var(static_cast<size_t>(groups), 0.0);
      forEachBroadcast(shape, shape, kept, [&](int64_t i, int64_t, int64_t g) {
        mean[g] += static_cast<double>(static_cast<Cmp>(xd[i]));
      });
      for (double& m : mean) m /= count;
      forEachBroadcast(shape, shape, kept, [&](int64_t i, int64_t, int64_t g) {
        const double d = static_cast<double>(static_cast<Cmp>(xd[i])) - mean[g];
        var[g] += d * d;
      });
      for (double& v : var) v = std::sqrt(v / count) + 1e-9;
      forEachBroadcast(shape, shape, kept, [&](int64_t i, int64_t, int64_t g) {
        yd[i] = T(static_cast<Cmp>((static_cast<double>(static_cast<Cmp>(xd[i])) - mean[g]) / var[g]));
      });
      return Status::ok();
    });
  }

 private:
  std::vector<int64_t> axes_;
};

// RMSNormalization-23: Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * Scale, Scale broadcasting to X.
class RmsNormalizationKernel : public Kernel {
 public:
  explicit RmsNormalizationKernel(const KernelInfo& info)
      : label_(info.node.label()), axis_(info.node.attrInt("axis", -1)), epsilon_(info.node.attrFloat("epsilon", 1e-5f)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    if (!x || !scale) return invalidArgument(label_ + ": inputs X and scale are required");
    if (x->rank() == 0) return invalidArgument(label_ + ": X must have rank >= 1");
    auto axis = normalizeAxis(axis_, static_cast<int64_t>(x->rank()));
    if (!axis.isOk()) return invalidArgument(label_ + ": " + axis.status().message());
    const Shape& shape = x->shape();
    int64_t outer = 1;
    for (int64_t d = 0; d < *axis; ++d) outer *= shape[static_cast<size_t>(d)];
    const int64_t inner = outer == 0 ? 0 : x->numel() / outer;
    std::vector<int64_t> scaleOuter, scaleInner;
    Status broadcast = scaleOffsets(*scale, shape, *axis, scaleOuter, scaleInner);
    if (!broadcast.isOk()) return invalidArgument(label_ + ": " + broadcast.message());
    KILN_ASSIGN_OR_RETURN(std::vector<double> scaleValues, readDoubleValues(*scale));
    Tensor& y = ctx.allocateOutput(0, x->dtype(), shape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      for (int64_t o = 0; o < outer && inner > 0; ++o) {
        const T* xp = x->data<T>() + o * inner;
        T* yp = y.data<T>() + o * inner;
        const double inv = rowInvRms(xp, inner, epsilon_);
        const double* s = scaleValues.data() + scaleOuter[static_cast<size_t>(o)];
        for (int64_t i = 0; i < inner; ++i) {
          yp[i] = T(static_cast<Cmp>(static_cast<double>(static_cast<Cmp>(xp[i])) * inv * s[scaleInner[i]]));
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t axis_;
  float epsilon_;
};

// GroupNormalization: X [N, C, ...] splits its channels into num_groups groups of C / num_groups; each (n, group)
// is normalized with its own mean and variance, then y = x_hat * scale + bias. Opset 18 takes one scale/bias per
// group, opset 21 one per channel (stash_type only names the precision, which is double here anyway).
class GroupNormalizationKernel : public Kernel {
 public:
  explicit GroupNormalizationKernel(const KernelInfo& info)
      : label_(info.node.label()), perChannel_(info.opset >= 21), groups_(info.node.attrInt("num_groups", 0)),
        epsilon_(info.node.attrFloat("epsilon", 1e-5f)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale || !bias) return invalidArgument(label_ + ": inputs X, scale and bias are required");
    if (x->rank() < 2) return invalidArgument(label_ + ": X must have rank >= 2 ([N, C, ...])");
    const Shape& shape = x->shape();
    const int64_t n = shape[0], c = shape[1];
    if (groups_ <= 0 || c % groups_ != 0) {
      return invalidArgument(label_ + ": num_groups " + std::to_string(groups_) + " must be positive and divide the " +
                             std::to_string(c) + " channels");
    }
    const int64_t params = perChannel_ ? c : groups_;
    for (const Tensor* t : {scale, bias}) {
      if (t->rank() != 1 || t->shape()[0] != params) {
        return invalidArgument(label_ + ": scale and bias must have shape [" + std::to_string(params) + "] (" +
                               (perChannel_ ? "channels" : "groups") + "), got " + shapeToString(t->shape()));
      }
    }
    KILN_ASSIGN_OR_RETURN(std::vector<double> scaleValues, readDoubleValues(*scale));
    KILN_ASSIGN_OR_RETURN(std::vector<double> biasValues, readDoubleValues(*bias));
    const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
    const int64_t perGroup = c / groups_;
    const int64_t groupSize = perGroup * spatial;
    Tensor& y = ctx.allocateOutput(0, x->dtype(), shape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t g = 0; g < groups_ && groupSize > 0; ++g) {
          const int64_t base = (b * c + g * perGroup) * spatial;
          const T* xp = x->data<T>() + base;
          T* yp = y.data<T>() + base;
          const auto [mean, inv] = rowMoments(xp, groupSize, epsilon_);
          for (int64_t i = 0; i < groupSize; ++i) {
            const size_t p = static_cast<size_t>(perChannel_ ? g * perGroup + i / spatial : g);
            const double v = (static_cast<double>(static_cast<Cmp>(xp[i])) - mean) * inv;
            yp[i] = T(static_cast<Cmp>(v * scaleValues[p] + biasValues[p]));
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  bool perChannel_;
  int64_t groups_;
  float epsilon_;
};

}  // namespace

// Called from registerNormalizationKernels (normalization.cpp).
void registerLayerNormalizationKernels(KernelRegistry& registry) {
  registry.add("LayerNormalization", 17, kAnyOpset, makeFactory<LayerNormalizationKernel>());
  registry.add("MeanVarianceNormalization", 9, kAnyOpset, makeFactory<MeanVarianceNormalizationKernel>());
  registry.add("RMSNormalization", 23, kAnyOpset, makeFactory<RmsNormalizationKernel>());
  registry.add("GroupNormalization", 18, kAnyOpset, makeFactory<GroupNormalizationKernel>());
}

}  // namespace kiln::cpu
