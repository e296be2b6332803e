// Vulkan kernel: ScatterND (opset 11; reductions add/mul from 16, max/min from 18) on shaders/scatter_nd.comp, as
// exports that update a fixed-size KV cache in place (index_put) write it. A copy of data, then the updates in row
// order. float32/float16 with any reduction; int32/int64 without one. Index tuples the host can read are checked
// (INVALID_ARGUMENT out of range, as on the CPU EP); device-computed ones out of range are skipped.
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr size_t kMaxTuple = 6;

// COMBINE(a, b) of each reduction, as the CPU EP computes it (max/min keep a unless b compares greater/less).
const char* combineOf(const std::string& reduction) {
  if (reduction == "add") return "((a) + (b))";
  if (reduction == "mul") return "((a) * (b))";
  if (reduction == "max") return "((b) > (a) ? (b) : (a))";
  if (reduction == "min") return "((b) < (a) ? (b) : (a))";
  return "(b)";
}

bool isInteger(DataType type) { return type == DataType::INT32 || type == DataType::INT64; }

class ScatterNDKernel final : public VkKernel {
 public:
  explicit ScatterNDKernel(const KernelCreateInfo& info) {
    ShaderVariant variant{"scatter_nd", {}, 3, kLocal};
    const DataType type = info.inputType(0);
    if (isInteger(type)) {
      shader_ = useShader(variant.define("WORDS", type == DataType::INT64 ? 2 : 1));
    } else {
      variant.define("COMBINE(a, b)", combineOf(info.node.attrString("reduction", "none")));
      shader_ = useShader(storedAs(variant, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* data, ctx.deviceInput(0));
    const VkTensor* indicesValue = ctx.input(1);
    const VkTensor* updatesValue = ctx.input(2);
    if (!indicesValue || !updatesValue) return Status(StatusCode::INVALID_ARGUMENT, "ScatterND needs indices and updates");
    const Shape& indexShape = indicesValue->shape;
    if (indexShape.empty()) return Status(StatusCode::INVALID_ARGUMENT, "ScatterND indices must have rank 1 or more");
    const size_t k = static_cast<size_t>(indexShape.back());
    if (k > data->shape.size() || k > kMaxTuple) {
      return Status(StatusCode::INVALID_ARGUMENT, "ScatterND index tuples of " + std::to_string(k) +
                                                      " for data " + shapeToString(data->shape));
    }
    Shape expected(indexShape.begin(), indexShape.end() - 1);
    expected.insert(expected.end(), data->shape.begin() + static_cast<std::ptrdiff_t>(k), data->shape.end());
    if (updatesValue->shape != expected) {
      return Status(StatusCode::INVALID_ARGUMENT, "ScatterND updates are " + shapeToString(updatesValue->shape) +
                                                      ", expected " + shapeToString(expected));
    }
    const auto strides = contiguousStrides(data->shape);
    std::vector<uint32_t> dims, tupleStrides;
    for (size_t m = 0; m < k; ++m) {
      dims.push_back(static_cast<uint32_t>(data->shape[m]));
      tupleStrides.push_back(static_cast<uint32_t>(strides[m]));
    }
    if (indicesValue->host) KILN_RETURN_IF_ERROR(checkIndices(*indicesValue->host, data->shape, k));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, data->dtype, data->shape));
    const uint64_t bytes = static_cast<uint64_t>(data->elementCount()) * dataTypeSize(data->dtype);
    if (bytes == 0) return Status::ok();
    KILN_RETURN_IF_ERROR(ctx.copy(data->range(), y->range(), bytes));
    const int64_t rows = shapeSize(Shape(indexShape.begin(), indexShape.end() - 1));
    int64_t slice = 1;
    for (size_t d = k; d < data->shape.size(); ++d) slice *= data->shape[d];
    if (rows == 0 || slice == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(const VkTensor* indices, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* updates, ctx.deviceInput(2));
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(slice), kLocal, &rowStride);
    PushConstants push;
    push.u32(slice).u32(rowStride).u32(rows).u32(k).u32Array(dims, kMaxTuple, 1).u32Array(tupleStrides, kMaxTuple);
    const BufferRange buffers[] = {indices->range(), updates->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  // Every index of a host-known tuple list within its dimension (negative ones counting from the end).
  static Status checkIndices(const Tensor& indices, const Shape& dataShape, size_t k) {
    const int64_t* values = indices.data<int64_t>();
    for (int64_t i = 0; k > 0 && i < indices.numel(); ++i) {
      const int64_t dim = dataShape[static_cast<size_t>(i) % k];
      if (values[i] < -dim || values[i] >= dim) {
        return Status(StatusCode::INVALID_ARGUMENT, "ScatterND index " + std::to_string(values[i]) +
                                                        " is out of range for a dimension of " + std::to_string(dim));
      }
    }
    return Status::ok();
  }

  uint32_t shader_ = 0;
};

NodeSupport checkScatterND(const SupportQuery& q) {
  const std::string reduction = q.node.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    return unsupported("reduction '" + reduction + "'");
  }
  if (q.inputType(1) != DataType::INT64) return unsupported("indices are not int64");
  const DataType type = q.inputType(0);
  NodeSupport s = supported();
  if (isInteger(type)) {
    if (reduction != "none") s = unsupported("integer ScatterND with a reduction");
    if (s.supported && q.inputType(2) != type) s = unsupported("updates differ in type from data");
  } else {
    s = requireFloat(q, {0, 2});
  }
  if (s.supported) s = requireRankAtMost(q, 0);
  return s;
}

}  // namespace

void registerScatterNDKernels(std::vector<KernelEntry>& out) {
  out.push_back({"ScatterND", 11, 1 << 30, checkScatterND,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new ScatterNDKernel(info));
                 }});
}

}  // namespace kiln::vk
