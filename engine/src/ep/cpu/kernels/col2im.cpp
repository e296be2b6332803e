// Col2Im (opset 18): the inverse of im2col. Input [N, C * prod(block_shape), L] holds, for each of the L sliding
// block positions over the padded image, the block's values; every value is added into the image position it
// came from, positions in the padding are dropped. Output [N, C, *image_shape]. Any number of spatial dims;
// strides, dilations (default 1) and pads (default 0, [begin..., end...]). Float types; L must equal the number
// of block positions the attributes give, otherwise INVALID_ARGUMENT.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

class Col2ImKernel : public Kernel {
 public:
  explicit Col2ImKernel(const KernelInfo& info)
      : label_(info.node.label()),
        strides_(info.node.attrInts("strides")),
        dilations_(info.node.attrInts("dilations")),
        pads_(info.node.attrInts("pads")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* imageInput = ctx.input(1);
    const Tensor* blockInput = ctx.input(2);
    if (!x || !imageInput || !blockInput) return nodeError(label_, "inputs input, image_shape and block_shape are required");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> image, readIndexInput(label_, *imageInput, "image_shape"));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> block, readIndexInput(label_, *blockInput, "block_shape"));
    const size_t dims = image.size();
    if (dims == 0 || block.size() != dims) return nodeError(label_, "image_shape and block_shape must have one value per spatial dim");
    std::vector<int64_t> strides = strides_.empty() ? std::vector<int64_t>(dims, 1) : strides_;
    std::vector<int64_t> dilations = dilations_.empty() ? std::vector<int64_t>(dims, 1) : dilations_;
    std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * dims, 0) : pads_;
    if (strides.size() != dims || dilations.size() != dims || pads.size() != 2 * dims) {
      return nodeError(label_, "strides, dilations and pads must have " + std::to_string(dims) + ", " +
                                   std::to_string(dims) + " and " + std::to_string(2 * dims) + " values");
    }
    if (x->rank() != 3) return nodeError(label_, "input must be [N, C * prod(block_shape), L], got " + shapeToString(x->shape()));
    int64_t blockSize = 1, positions = 1;
    std::vector<int64_t> grid(dims);
    for (size_t d = 0; d < dims; ++d) {
      if (block[d] <= 0 || image[d] < 0 || strides[d] <= 0 || dilations[d] <= 0 || pads[d] < 0 || pads[d + dims] < 0) {
        return nodeError(label_, "block_shape, strides and dilations must be positive, image_shape and pads not negative");
      }
      blockSize *= block[d];
      const int64_t span = dilations[d] * (block[d] - 1) + 1;
      const int64_t padded = image[d] + pads[d] + pads[d + dims];
      grid[d] = padded < span ? 0 : (padded - span) / strides[d] + 1;
      positions *= grid[d];
    }
    const Shape& xs = x->shape();
    if (xs[1] % blockSize != 0 || xs[2] != positions) {
      return nodeError(label_, "input " + shapeToString(xs) + " does not fit blocks of " + std::to_string(blockSize) +
                                   " values at " + std::to_string(positions) + " positions");
    }
    const int64_t n = xs[0], channels = xs[1] / blockSize;
    Shape outShape{n, channels};
    outShape.insert(outShape.end(), image.begin(), image.end());
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    const int64_t pixels = shapeSize(Shape(image.begin(), image.end()));
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      std::vector<C> acc(static_cast<size_t>(pixels));
      std::vector<int64_t> k(dims), p(dims);
      for (int64_t plane = 0; plane < n * channels; ++plane) {
        std::fill(acc.begin(), acc.end(), C(0));
        const T* src = x->data<T>() + plane * blockSize * positions;
        for (int64_t kb = 0; kb < blockSize; ++kb) {
          for (int64_t rest = kb, d = static_cast<int64_t>(dims); d-- > 0; rest /= block[d]) k[d] = rest % block[d];
          for (int64_t l = 0; l < positions; ++l) {
            for (int64_t rest = l, d = static_cast<int64_t>(dims); d-- > 0; rest /= grid[d]) p[d] = rest % grid[d];
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < dims && inside; ++d) {
              const int64_t at = p[d] * strides[d] - pads[d] + k[d] * dilations[d];
              inside = at >= 0 && at < image[d];
              offset = offset * image[d] + at;
            }
            if (inside) acc[static_cast<size_t>(offset)] += static_cast<C>(src[kb * positions + l]);
          }
        }
        T* dst = y.data<T>() + plane * pixels;
        for (int64_t i = 0; i < pixels; ++i) dst[i] = T(acc[static_cast<size_t>(i)]);
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  std::vector<int64_t> strides_, dilations_, pads_;
};

}  // namespace

void registerCol2ImKernels(KernelRegistry& registry) {
  registry.add("Col2Im", 18, kAnyOpset, makeFactory<Col2ImKernel>());
}

}  // namespace kiln::cpu
