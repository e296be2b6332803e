// Small helpers shared by the Vulkan kernels: workgroup counts, broadcasting, push-constant packing, reading
// integer parameters that live on the host.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ep/vulkan/vk_kernel.h"
#include "ops/shape_rules.h"

namespace kiln::vk {

constexpr size_t kMaxRank = 6;  // push-constant shape arrays hold this many dimensions

// Workgroups covering `count` invocations of `localSize` in x, spilling into y past 65535 groups. `rowStride`
// receives the invocations per y row (shaders compute i = x + y * rowStride).
std::array<uint32_t, 3> linearGroups(uint64_t count, uint32_t localSize, uint32_t* rowStride);

// The ONNX shape rules both EPs share (ops/shape_rules.h).
using ops::broadcastShapes;
using ops::normalizeAxis;
// Element strides of `in` viewed as `out` under broadcasting (0 where `in` repeats), right-aligned to out's rank.
std::vector<uint32_t> broadcastStrides(const Shape& in, const Shape& out);
// An output shape with each input's broadcast strides, after merging adjacent dimensions that every input walks
// the same way (contiguously, or not at all). [1,64,320,320] + [1,64,1,1] becomes rank 2: fewer index divisions
// per element in the shaders.
struct CollapsedBroadcast {
  std::vector<uint32_t> dims;
  std::vector<std::vector<uint32_t>> strides;  // per input
};
CollapsedBroadcast collapseBroadcast(const Shape& out, const std::vector<Shape>& inputs);

// The variants of a broadcasting elementwise shader (binary.comp, compare.comp, where.comp): `direct` when every
// input has the output's shape (index i everywhere), `general` for any rank <= 6, `grid` for at most 3 collapsed
// dimensions on the dispatch grid. kNoShader marks a variant the shader does not have.
constexpr uint32_t kNoShader = UINT32_MAX;
struct BroadcastShaders {
  uint32_t direct = kNoShader, general = kNoShader, grid = kNoShader;
};
// Records out = f(inputs...) with broadcasting. Push constants: count, rowStride, rank, dims[6], then 6 strides per
// input (innermost first in the grid variant, outermost first otherwise).
Status recordBroadcast(RecordContext& ctx, const BroadcastShaders& shaders, const std::vector<const VkTensor*>& inputs,
                       const VkTensor& out, uint32_t localSize);

// Float tensors in shaders (shaders/storage.glsl): float32, or float16 where the device has 16-bit storage
// (storageBuffer16BitAccess); arithmetic is float32 either way. Without the feature the kernels do not claim float16
// nodes, so they stay with the CPU EP.
bool deviceStoresFloat16(const DeviceInfo& device);
// `variant` with float tensors stored as `type`: defines FP16_STORAGE for float16, nothing for float32 (so float32
// variant keys are unchanged).
ShaderVariant storedAs(ShaderVariant variant, DataType type);
// The storage type of a kernel's float tensors: input `i`'s type when it is float16, else float32.
DataType floatStorage(const KernelCreateInfo& info, size_t i = 0);

// Contiguous element strides of `shape`.
std::vector<int64_t> contiguousStrides(const Shape& shape);

// Packs push constants in declaration order (std430: 4-byte scalars, arrays of uint/float with stride 4).
class PushConstants {
 public:
  PushConstants& u32(uint64_t value) { return put(static_cast<uint32_t>(value)); }
  PushConstants& i32(int64_t value) { return put(static_cast<int32_t>(value)); }
  PushConstants& f32(double value) { return put(static_cast<float>(value)); }
  // `values` padded with `pad` to exactly `length` entries.
  PushConstants& u32Array(const std::vector<uint32_t>& values, size_t length, uint32_t pad = 0);
  PushConstants& i32Array(const std::vector<int64_t>& values, size_t length, int64_t pad = 0);
  const void* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  template <class T>
  PushConstants& put(T value) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    return *this;
  }
  std::vector<uint8_t> bytes_;
};

// The integers of a host value (int64/int32 tensors), e.g. Reshape's shape or Slice's starts.
Result<std::vector<int64_t>> hostInts(const VkTensor* value, const std::string& what);
// The floats of a host value (float/double tensors), e.g. Resize's scales.
Result<std::vector<float>> hostFloats(const VkTensor* value, const std::string& what);

// Support-check helpers: unsupported unless input i is known on the host (a constant or an integer value from
// outside the partition), and unless rank <= kMaxRank where known.
NodeSupport requireHostInput(const SupportQuery& query, size_t i, const char* what);
NodeSupport requireRankAtMost(const SupportQuery& query, size_t input, size_t maxRank = kMaxRank);

}  // namespace kiln::vk
