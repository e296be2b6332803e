// Expand (bidirectional broadcast to a shape) and Tile (repetition along every axis), for every element type.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// Copies `in` broadcast (right-aligned, size-1 dims repeated) into `out`, whose shape it broadcasts to.
Status broadcastCopy(const Tensor& in, Tensor& out) {
  return copyStrided(in, 0, broadcastStrides(in.shape(), out.shape()), out);
}

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const KernelInfo& info) : label_(info.node.opType) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'input' and 'shape'");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, readIndexInput(label_, *ctx.input(1), "input 'shape'"));
    Result<Shape> outShape = broadcastShapes(data->shape(), shape);
    if (!outShape.isOk()) return nodeError(label_, outShape.status().message());
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape.value());
    return broadcastCopy(*data, out);
  }

 private:
  std::string label_;
};

// Tile: `repeats` per axis (opset 6+); opset 1 took scalar `tiles` and `axis` inputs instead.
class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const KernelInfo& info) : label_(info.node.opType), legacy_(info.opset < 6) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'input' and 'repeats'");
    const size_t rank = data->rank();
    std::vector<int64_t> repeats;
    if (legacy_) {
      if (!ctx.hasInput(2)) return nodeError(label_, "needs input 'axis' at opset 1");
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, readIndexInput(label_, *ctx.input(1), "input 'tiles'"));
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axis, readIndexInput(label_, *ctx.input(2), "input 'axis'"));
      if (tiles.size() != 1 || axis.size() != 1) return nodeError(label_, "'tiles' and 'axis' must be scalars");
      const int64_t a = axis[0] < 0 ? axis[0] + static_cast<int64_t>(rank) : axis[0];
      if (a < 0 || a >= static_cast<int64_t>(rank)) return nodeError(label_, "axis is out of range");
      repeats.assign(rank, 1);
      repeats[static_cast<size_t>(a)] = tiles[0];
    } else {
      KILN_ASSIGN_OR_RETURN(repeats, readIndexInput(label_, *ctx.input(1), "input 'repeats'"));
    }
    if (repeats.size() != rank) {
      return nodeError(label_, "repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                                   std::to_string(rank));
    }
    // View the input as [1, d0, 1, d1, ...] broadcast to [r0, d0, r1, d1, ...]: that order is exactly the
    // tiled layout, so Tile becomes a broadcast copy.
    Shape view, expanded, outShape;
    for (size_t i = 0; i < rank; ++i) {
      if (repeats[i] < 0) return nodeError(label_, "repeats must be non-negative");
      view.insert(view.end(), {1, data->dim(i)});
      expanded.insert(expanded.end(), {repeats[i], data->dim(i)});
      outShape.push_back(repeats[i] * data->dim(i));
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape);
    Tensor expandedOut = out.reshaped(expanded);
    return broadcastCopy(data->reshaped(view), expandedOut);
  }

 private:
  std::string label_;
  bool legacy_;
};

}  // namespace

void registerExpandTileKernels(KernelRegistry& registry) {
  registry.add("Expand", 8, kAnyOpset, makeFactory<ExpandKernel>());
  registry.add("Tile", 1, kAnyOpset, makeFactory<TileKernel>());
}

}  // namespace kiln::cpu
