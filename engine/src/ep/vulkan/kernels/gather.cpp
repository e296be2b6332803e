// Vulkan kernels: Gather, GatherElements and GatherND (batch_dims) for float32/float16/int32/int64 data (uint8/int8
// with 8-bit storage) with int32/int64 indices on the host or the device, shaders/gather.comp. Gather views data as [outer, axisSize, inner]; the output is
// [outer, indexCount, inner] reshaped to data[:axis] + indices.shape + data[axis+1:].
#include <algorithm>
#include <functional>
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

// 32-bit words per element (0: not handled); float16 moves as 16-bit halves (ELEM16), uint8/int8 as bytes
// (ELEM8).
bool isByte(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }
uint32_t wordsOf(DataType type) {
  if (type == DataType::FLOAT || type == DataType::INT32 || type == DataType::FLOAT16) return 1;
  if (isByte(type)) return 1;
  if (type == DataType::INT64) return 2;
  return 0;
}

// Indices known on the host are checked here, as the CPU EP does; device indices are clamped by the shader.
Status checkHostIndices(const VkTensor* indexValue, int64_t axisSize, const char* op) {
  if (!indexValue->host) return Status::ok();
  KILN_ASSIGN_OR_RETURN(auto indices, hostInts(indexValue, std::string(op) + " indices"));
  for (int64_t index : indices) {
    if (index < -axisSize || index >= axisSize) {
      return Status(StatusCode::INVALID_ARGUMENT, std::string(op) + " index " + std::to_string(index) +
                                                      " is out of range for axis size " +
                                                      std::to_string(axisSize));
    }
  }
  return Status::ok();
}

// Gather, GatherElements and GatherND share gather.comp: one variant per index width, picked by the indices' type;
// `mode` is the shader's define for the op ("" for Gather, "ELEMENTS", "ND").
class IndexedGatherKernel : public VkKernel {
 protected:
  IndexedGatherKernel(const KernelCreateInfo& info, const char* mode) : axis_(info.node.attrInt("axis", 0)) {
    const uint32_t words = wordsOf(info.inputType(0));
    for (int index64 = 0; index64 < 2; ++index64) {
      ShaderVariant variant{"gather", {}, 3, kLocal};
      variant.define("WORDS", static_cast<int64_t>(words)).define("INDEX64", index64);
      if (info.inputType(0) == DataType::FLOAT16) variant.define("ELEM16", 1);
      if (isByte(info.inputType(0))) variant.define("ELEM8", 1);
      if (*mode) variant.define(mode, 1);
      shaders_[index64] = useShader(variant);
    }
  }

  // Dispatches `count` invocations; the push constants after count and rowStride come from `tail`.
  Status dispatchGather(RecordContext& ctx, const VkTensor& data, const VkTensor& indices, const VkTensor& out,
                        int64_t count, const std::function<void(PushConstants&)>& tail) {
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(count), kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride);
    tail(push);
    const BufferRange buffers[] = {data.range(), indices.range(), out.range()};
    return ctx.dispatch(shaders_[indices.dtype == DataType::INT64 ? 1 : 0], buffers, push.data(), push.size(),
                        groups);
  }

  int64_t axis_;

 private:
  uint32_t shaders_[2] = {0, 0};
};

class GatherKernel final : public IndexedGatherKernel {
 public:
  explicit GatherKernel(const KernelCreateInfo& info) : IndexedGatherKernel(info, "") {}

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* data, ctx.deviceInput(0));
    const VkTensor* indexValue = ctx.input(1);
    if (!indexValue) return Status(StatusCode::INVALID_ARGUMENT, "Gather needs indices");
    if (indexValue->dtype != DataType::INT64 && indexValue->dtype != DataType::INT32) {
      return Status(StatusCode::INVALID_ARGUMENT, "Gather indices must be int32 or int64");
    }
    const int64_t rank = static_cast<int64_t>(data->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "Gather axis"));
    const int64_t axisSize = data->shape[static_cast<size_t>(axis)];
    KILN_RETURN_IF_ERROR(checkHostIndices(indexValue, axisSize, "Gather"));
    int64_t inner = 1;
    Shape shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        shape.insert(shape.end(), indexValue->shape.begin(), indexValue->shape.end());
      } else {
        shape.push_back(data->shape[static_cast<size_t>(d)]);
      }
      if (d > axis) inner *= data->shape[static_cast<size_t>(d)];
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, data->dtype, shape));
    const int64_t count = shapeSize(shape);
    if (count == 0) return Status::ok();
    if (axisSize == 0) return Status(StatusCode::INVALID_ARGUMENT, "Gather from an empty axis");
    KILN_ASSIGN_OR_RETURN(const VkTensor* indices, ctx.deviceInput(1));
    return dispatchGather(ctx, *data, *indices, *out, count, [&](PushConstants& push) {
      push.u32(inner).u32(indices->elementCount()).i32(axisSize);
    });
  }
};

class GatherElementsKernel final : public IndexedGatherKernel {
 public:
  explicit GatherElementsKernel(const KernelCreateInfo& info) : IndexedGatherKernel(info, "ELEMENTS") {}

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* data, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* indices, ctx.deviceInput(1));
    const int64_t rank = static_cast<int64_t>(data->shape.size());
    if (indices->shape.size() != data->shape.size() || rank > static_cast<int64_t>(kMaxRank)) {
      return Status(StatusCode::INVALID_ARGUMENT, "GatherElements indices " + shapeToString(indices->shape) +
                                                      " do not match data " + shapeToString(data->shape));
    }
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "GatherElements axis"));
    const int64_t axisSize = data->shape[static_cast<size_t>(axis)];
    KILN_RETURN_IF_ERROR(checkHostIndices(ctx.input(1), axisSize, "GatherElements"));
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, data->dtype, indices->shape));
    const int64_t count = indices->elementCount();
    if (count == 0) return Status::ok();
    if (axisSize == 0) return Status(StatusCode::INVALID_ARGUMENT, "GatherElements from an empty axis");
    std::vector<uint32_t> dims(indices->shape.begin(), indices->shape.end()), strides;
    for (int64_t s : contiguousStrides(data->shape)) strides.push_back(static_cast<uint32_t>(s));
    return dispatchGather(ctx, *data, *indices, *out, count, [&](PushConstants& push) {
      push.u32(rank).u32(axis).i32(axisSize).u32Array(dims, kMaxRank, 1).u32Array(strides, kMaxRank);
    });
  }
};

// GatherND: output = indices.shape[:-1] + data.shape[batch_dims + k:], slice by slice (the CPU EP's rules).
class GatherNDKernel final : public IndexedGatherKernel {
 public:
  explicit GatherNDKernel(const KernelCreateInfo& info)
      : IndexedGatherKernel(info, "ND"), batchDims_(info.node.attrInt("batch_dims", 0)) {}

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* data, ctx.deviceInput(0));
    const VkTensor* indexValue = ctx.input(1);
    if (!indexValue) return Status(StatusCode::INVALID_ARGUMENT, "GatherND needs indices");
    const int64_t r = static_cast<int64_t>(data->shape.size()), q = static_cast<int64_t>(indexValue->shape.size());
    const int64_t b = batchDims_;
    if (b < 0 || b >= std::min(q, r)) return fail("batch_dims must be smaller than both ranks");
    const int64_t k = indexValue->shape.back();
    if (k < 1 || k > r - b || k > static_cast<int64_t>(kMaxRank)) {
      return fail("indices' last dimension must be in [1, rank - batch_dims]");
    }
    int64_t batches = 1;
    for (int64_t d = 0; d < b; ++d) {
      if (data->shape[static_cast<size_t>(d)] != indexValue->shape[static_cast<size_t>(d)]) {
        return fail("batch dimensions of data and indices differ");
      }
      batches *= data->shape[static_cast<size_t>(d)];
    }
    Shape shape(indexValue->shape.begin(), indexValue->shape.end() - 1);
    int64_t slice = 1;
    for (int64_t d = b + k; d < r; ++d) {
      shape.push_back(data->shape[static_cast<size_t>(d)]);
      slice *= data->shape[static_cast<size_t>(d)];
    }
    const auto strides = contiguousStrides(data->shape);
    std::vector<uint32_t> dims, tupleStrides;
    for (int64_t m = 0; m < k; ++m) {
      dims.push_back(static_cast<uint32_t>(data->shape[static_cast<size_t>(b + m)]));
      tupleStrides.push_back(static_cast<uint32_t>(strides[static_cast<size_t>(b + m)]));
      if (dims.back() == 0 && shapeSize(shape) > 0) return fail("gathering from an empty dimension");
    }
    if (indexValue->host) {  // host-known tuples are checked, as the CPU EP does; device ones are clamped
      KILN_ASSIGN_OR_RETURN(auto indices, hostInts(indexValue, "GatherND indices"));
      for (size_t i = 0; i < indices.size(); ++i) {
        const int64_t dim = dims[i % static_cast<size_t>(k)];
        if (indices[i] < -dim || indices[i] >= dim) {
          return fail("index " + std::to_string(indices[i]) + " is out of range");
        }
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, data->dtype, shape));
    const int64_t count = shapeSize(shape);
    if (count == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(const VkTensor* indices, ctx.deviceInput(1));
    const int64_t tuples = indices->elementCount() / k;
    const int64_t perBatch = b == 0 || batches == 0 ? 0 : tuples / batches;
    const int64_t batchStride = b == 0 ? 0 : strides[static_cast<size_t>(b - 1)];
    return dispatchGather(ctx, *data, *indices, *out, count, [&](PushConstants& push) {
      push.u32(slice).u32(k).u32(perBatch).u32(batchStride).u32Array(dims, kMaxRank, 1).u32Array(tupleStrides, kMaxRank);
    });
  }

 private:
  Status fail(const std::string& message) const {
    return Status(StatusCode::INVALID_ARGUMENT, "GatherND: " + message);
  }

  int64_t batchDims_;
};

NodeSupport gatherSupport(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  if (wordsOf(type) == 0) {
    return unsupported("data is " +
                       (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                       " (the Vulkan Gather takes float32, float16, int32, int64, uint8 or int8)");
  }
  if (type == DataType::FLOAT16 && !deviceStoresFloat16(q.device))
    return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks");
  if (isByte(type) && !q.device.storageBuffer8Bit)
    return unsupported("moving 8-bit elements needs storageBuffer8BitAccess, which the device lacks");
  const DataType indexType = q.inputType(1);
  if (indexType != DataType::INT64 && indexType != DataType::INT32)
    return unsupported("indices are not int32 or int64");
  return q.node.opType == "GatherElements" ? requireRankAtMost(q, 0) : supported();
}

}  // namespace

void registerGatherKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Gather", 1, 1 << 30, gatherSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GatherKernel(info));
                 }});
  out.push_back({"GatherND", 11, 1 << 30, gatherSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GatherNDKernel(info));
                 }});
  out.push_back({"GatherElements", 11, 1 << 30, gatherSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GatherElementsKernel(info));
                 }});
}

}  // namespace kiln::vk
