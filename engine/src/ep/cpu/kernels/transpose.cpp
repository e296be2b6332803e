// Permuting kernels: Transpose, DepthToSpace (DCR/CRD) and SpaceToDepth, all expressed as one strided copy.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

namespace {

// Copies `src` permuted into `dst`: dims/strides describe the output dims in order with their input strides;
// dim `contiguous` has input stride 1 and the last dim is strided. Tiles the (contiguous, last) plane.
template <class S>
void tiledPermute(const S* src, S* dst, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                  size_t contiguous) {
  constexpr int64_t kTile = 32;
  const size_t last = dims.size() - 1;
  std::vector<int64_t> outStrides(dims.size(), 1);
  for (size_t i = last; i-- > 0;) outStrides[i] = outStrides[i + 1] * dims[i + 1];
  std::vector<size_t> others;  // the dims walked outside the tiled plane
  int64_t planes = 1;
  for (size_t i = 0; i < last; ++i) {
    if (i == contiguous) continue;
    others.push_back(i);
    planes *= dims[i];
  }
  const int64_t rows = dims[contiguous], cols = dims[last], colStride = strides[last];
  const int64_t rowOutStride = outStrides[contiguous];
  std::vector<int64_t> index(others.size(), 0);
  int64_t inBase = 0, outBase = 0;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          const S* from = src + inBase + r;
          S* to = dst + outBase + r * rowOutStride;
          for (int64_t c = c0; c < c1; ++c) to[c] = from[c * colStride];
        }
      }
    }
    for (size_t k = others.size(); k-- > 0;) {
      const size_t d = others[k];
      inBase += strides[d];
      outBase += outStrides[d];
      if (++index[k] < dims[d]) break;
      inBase -= strides[d] * dims[d];
      outBase -= outStrides[d] * dims[d];
      index[k] = 0;
    }
  }
}

}  // namespace

Status permuteElements(const Tensor& in, const Shape& viewShape, const std::vector<int64_t>& perm, Tensor& out) {
  const size_t rank = viewShape.size();
  if (perm.size() != rank) return invalidArgument("permutation length does not match the rank");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return invalidArgument("invalid permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const int64_t total = shapeSize(viewShape);
  if (total == 0) return Status::ok();
  // Walk the output in order; drop size-1 dims and merge output-adjacent dims that are adjacent in the input
  // too, so that common cases become a few long strided (or contiguous) runs.
  const std::vector<int64_t> inStrides = stridesOf(viewShape);
  std::vector<int64_t> dims, strides;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = viewShape[static_cast<size_t>(perm[i])];
    const int64_t s = inStrides[static_cast<size_t>(perm[i])];
    if (d == 1) continue;
    if (!dims.empty() && strides.back() == s * d) {
      dims.back() *= d;
      strides.back() = s;
    } else {
      dims.push_back(d);
      strides.push_back(s);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back(1);
  }
  // When the output's innermost dim is strided in the input, copy in square tiles between it and the dim that
  // is contiguous in the input, so that both sides stay in cache.
  const size_t last = dims.size() - 1;
  size_t contiguous = last;
  for (size_t i = 0; i < last; ++i) {
    if (strides[i] == 1) contiguous = i;
  }
  if (strides[last] != 1 && contiguous != last) {
    return dispatchStorage(in.dtype(), [&]<class S>() {
      tiledPermute(elementsOf<S>(in), mutableElementsOf<S>(out), dims, strides, contiguous);
      return Status::ok();
    });
  }
  return dispatchStorage(in.dtype(), [&]<class S>() {
    const S* src = elementsOf<S>(in);
    S* dst = mutableElementsOf<S>(out);
    const size_t outerRank = dims.size() - 1;
    const int64_t inner = dims.back();
    const int64_t innerStride = strides.back();
    std::vector<int64_t> index(outerRank, 0);
    int64_t base = 0;
    for (int64_t written = 0; written < total; written += inner) {
      if (innerStride == 1) {
        std::copy(src + base, src + base + inner, dst + written);
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[written + j] = src[base + j * innerStride];
      }
      for (size_t d = outerRank; d-- > 0;) {
        base += strides[d];
        if (++index[d] < dims[d]) break;
        base -= strides[d] * dims[d];
        index[d] = 0;
      }
    }
    return Status::ok();
  });
}

namespace {

// Transpose: perm defaults to reversing the axes.
class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info)
      : label_(info.node.opType), hasPerm_(info.node.hasAttribute("perm")), perm_(info.node.attrInts("perm")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    const size_t rank = data->rank();
    std::vector<int64_t> perm = perm_;
    if (!hasPerm_) {
      perm.resize(rank);
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    }
    if (perm.size() != rank) {
      return nodeError(label_, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    }
    Shape outShape(rank);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(rank) : perm[i];
      if (p < 0 || p >= static_cast<int64_t>(rank)) return nodeError(label_, "perm entry out of range");
      perm[i] = p;
      outShape[i] = data->dim(static_cast<size_t>(p));
    }
    Tensor& out = ctx.allocateUninitializedOutput(0, data->dtype(), outShape);
    Status status = permuteElements(*data, data->shape(), perm, out);
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool hasPerm_;
  std::vector<int64_t> perm_;
};

// DepthToSpace / SpaceToDepth on NCHW input: a reshape to 6-D, a permutation and a reshape back.
class BlockRearrangeKernel final : public Kernel {
 public:
  BlockRearrangeKernel(const KernelInfo& info, bool toSpace)
      : label_(info.node.opType),
        toSpace_(toSpace),
        blockSize_(info.node.attrInt("blocksize", 0)),
        crd_(info.node.attrString("mode", "DCR") == "CRD") {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    if (data->rank() != 4) return nodeError(label_, "expects a 4-D input, got " + shapeToString(data->shape()));
    const int64_t b = blockSize_;
    if (b <= 0) return nodeError(label_, "blocksize must be positive");
    const int64_t n = data->dim(0), c = data->dim(1), h = data->dim(2), w = data->dim(3);
    Shape view, outShape;
    std::vector<int64_t> perm;
    if (toSpace_) {
      if (c % (b * b) != 0) return nodeError(label_, "channels are not divisible by blocksize^2");
      const int64_t oc = c / (b * b);
      if (crd_) {
        view = {n, oc, b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        view = {n, b, b, oc, h, w};
        perm = {0, 3, 4, 1, 5, 2};
      }
      outShape = {n, oc, h * b, w * b};
    } else {
      if (h % b != 0 || w % b != 0) return nodeError(label_, "height or width is not divisible by blocksize");
      view = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      outShape = {n, c * b * b, h / b, w / b};
    }
    Tensor& out = ctx.allocateUninitializedOutput(0, data->dtype(), outShape);
    return permuteElements(*data, view, perm, out);
  }

 private:
  std::string label_;
  bool toSpace_;
  int64_t blockSize_;
  bool crd_;
};

}  // namespace

void registerTransposeKernels(KernelRegistry& registry) {
  registry.add("Transpose", 1, kAnyOpset, makeFactory<TransposeKernel>());
  registry.add("DepthToSpace", 1, kAnyOpset, [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new BlockRearrangeKernel(info, true));
  });
  registry.add("SpaceToDepth", 1, kAnyOpset, [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new BlockRearrangeKernel(info, false));
  });
}

}  // namespace kiln::cpu
