#include "ep/vulkan/kernel_utils.h"

#include <algorithm>

namespace kiln::vk {

std::array<uint32_t, 3> linearGroups(uint64_t count, uint32_t localSize, uint32_t* rowStride) {
  const uint64_t groups = (count + localSize - 1) / localSize;
  constexpr uint64_t kMaxX = 65535;
  if (groups <= kMaxX) {
    if (rowStride) *rowStride = static_cast<uint32_t>(groups * localSize);
    return {static_cast<uint32_t>(std::max<uint64_t>(groups, count ? 1 : 0)), 1, 1};
  }
  const uint64_t rows = (groups + kMaxX - 1) / kMaxX;
  if (rowStride) *rowStride = static_cast<uint32_t>(kMaxX * localSize);
  return {static_cast<uint32_t>(kMaxX), static_cast<uint32_t>(rows), 1};
}

std::vector<int64_t> contiguousStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<uint32_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<uint32_t> strides(out.size(), 0);
  const size_t offset = out.size() - in.size();
  int64_t stride = 1;
  for (size_t i = in.size(); i-- > 0;) {
    strides[i + offset] = in[i] == 1 ? 0 : static_cast<uint32_t>(stride);
    stride *= in[i];
  }
  return strides;
}

CollapsedBroadcast collapseBroadcast(const Shape& out, const std::vector<Shape>& inputs) {
  std::vector<std::vector<uint32_t>> full;
  for (const auto& in : inputs) full.push_back(broadcastStrides(in, out));
  CollapsedBroadcast result;
  result.strides.resize(inputs.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;  // size-1 dimensions do not move any index
    bool merge = !result.dims.empty();
    for (size_t k = 0; merge && k < inputs.size(); ++k) {
      const uint32_t prev = result.strides[k].back(), cur = full[k][d];
      // Mergeable when the previous (outer) stride equals this stride times this extent, or both are 0.
      merge = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * static_cast<uint32_t>(out[d]));
    }
    if (merge) {
      result.dims.back() *= static_cast<uint32_t>(out[d]);
      for (size_t k = 0; k < inputs.size(); ++k) result.strides[k].back() = full[k][d];
    } else {
      result.dims.push_back(static_cast<uint32_t>(out[d]));
      for (size_t k = 0; k < inputs.size(); ++k) result.strides[k].push_back(full[k][d]);
    }
  }
  return result;
}

Status recordBroadcast(RecordContext& ctx, const BroadcastShaders& shaders, const std::vector<const VkTensor*>& inputs,
                       const VkTensor& out, uint32_t localSize) {
  std::vector<BufferRange> buffers;
  std::vector<Shape> shapes;
  bool same = true;
  for (const VkTensor* in : inputs) {
    buffers.push_back(in->range());
    shapes.push_back(in->shape);
    same = same && in->shape == out.shape;
  }
  buffers.push_back(out.range());
  const CollapsedBroadcast collapsed = collapseBroadcast(out.shape, shapes);
  const size_t rank = collapsed.dims.size();
  if (same && shaders.direct != kNoShader) {
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(out.elementCount()), localSize, &rowStride);
    PushConstants push;
    push.u32(out.elementCount()).u32(rowStride).u32(0).u32Array({}, kMaxRank, 1);
    for (size_t k = 0; k < inputs.size(); ++k) push.u32Array({}, kMaxRank);
    return ctx.dispatch(shaders.direct, buffers, push.data(), push.size(), groups);
  }
  if (shaders.grid != kNoShader && rank > 0 && rank <= 3) {
    // Innermost first: x walks the last dimension.
    std::vector<uint32_t> dims(collapsed.dims.rbegin(), collapsed.dims.rend());
    dims.resize(3, 1);
    const std::array<uint32_t, 3> groups = {(dims[0] + localSize - 1) / localSize, dims[1], dims[2]};
    if (groups[0] <= 65535 && groups[1] <= 65535 && groups[2] <= 65535) {
      PushConstants push;
      push.u32(out.elementCount()).u32(0).u32(rank).u32Array(dims, kMaxRank, 1);
      for (const auto& strides : collapsed.strides) {
        push.u32Array(std::vector<uint32_t>(strides.rbegin(), strides.rend()), kMaxRank);
      }
      return ctx.dispatch(shaders.grid, buffers, push.data(), push.size(), groups);
    }
  }
  if (rank > kMaxRank) {
    return Status(StatusCode::NOT_IMPLEMENTED, "broadcasting beyond rank " + std::to_string(kMaxRank));
  }
  uint32_t rowStride = 0;
  const auto groups = linearGroups(static_cast<uint64_t>(out.elementCount()), localSize, &rowStride);
  PushConstants push;
  push.u32(out.elementCount()).u32(rowStride).u32(rank).u32Array(collapsed.dims, kMaxRank, 1);
  for (const auto& strides : collapsed.strides) push.u32Array(strides, kMaxRank);
  return ctx.dispatch(shaders.general, buffers, push.data(), push.size(), groups);
}

PushConstants& PushConstants::u32Array(const std::vector<uint32_t>& values, size_t length, uint32_t pad) {
  for (size_t i = 0; i < length; ++i) u32(i < values.size() ? values[i] : pad);
  return *this;
}

PushConstants& PushConstants::i32Array(const std::vector<int64_t>& values, size_t length, int64_t pad) {
  for (size_t i = 0; i < length; ++i) i32(i < values.size() ? values[i] : pad);
  return *this;
}

Result<std::vector<int64_t>> hostInts(const VkTensor* value, const std::string& what) {
  if (!value || !value->host) return Status(StatusCode::FAIL, what + " is not known on the host");
  const Tensor& t = *value->host;
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::INT64) {
    std::copy(t.data<int64_t>(), t.data<int64_t>() + out.size(), out.begin());
  } else if (t.dtype() == DataType::INT32) {
    std::copy(t.data<int32_t>(), t.data<int32_t>() + out.size(), out.begin());
  } else {
    return Status(StatusCode::INVALID_ARGUMENT, what + " must be int64 or int32, got " + dataTypeName(t.dtype()));
  }
  return out;
}

Result<std::vector<float>> hostFloats(const VkTensor* value, const std::string& what) {
  if (!value || !value->host) return Status(StatusCode::FAIL, what + " is not known on the host");
  const Tensor& t = *value->host;
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::FLOAT) {
    std::copy(t.data<float>(), t.data<float>() + out.size(), out.begin());
  } else if (t.dtype() == DataType::DOUBLE) {
    std::copy(t.data<double>(), t.data<double>() + out.size(), out.begin());
  } else if (t.dtype() == DataType::FLOAT16) {
    std::copy(t.data<Float16>(), t.data<Float16>() + out.size(), out.begin());
  } else {
    return Status(StatusCode::INVALID_ARGUMENT, what + " must be float, got " + dataTypeName(t.dtype()));
  }
  return out;
}

bool deviceStoresFloat16(const DeviceInfo& device) { return device.storageBuffer16Bit; }

ShaderVariant storedAs(ShaderVariant variant, DataType type) {
  if (type == DataType::FLOAT16) variant.define("FP16_STORAGE", 1);
  return variant;
}

DataType floatStorage(const KernelCreateInfo& info, size_t i) {
  return info.inputType(i) == DataType::FLOAT16 ? DataType::FLOAT16 : DataType::FLOAT;
}

NodeSupport requireHostInput(const SupportQuery& query, size_t i, const char* what) {
  if (!query.hasInput(i) || query.onHost(i)) return supported();
  return unsupported(std::string(what) + " is computed on the device (the kernel needs it on the host)");
}

NodeSupport requireRankAtMost(const SupportQuery& query, size_t input, size_t maxRank) {
  const int rank = query.inputRank(input);
  if (rank > static_cast<int>(maxRank)) {
    return unsupported("rank " + std::to_string(rank) + " exceeds the Vulkan kernels' " + std::to_string(maxRank));
  }
  return supported();
}

}  // namespace kiln::vk
