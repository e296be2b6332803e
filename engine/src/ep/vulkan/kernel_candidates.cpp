// Autotune's generic hook (vk_kernel.h): which candidate configurations a kernel registers, and the workgroup-size
// candidates that elementwise and GEMM kernels share.
#include <algorithm>

#include "ep/vulkan/vk_kernel.h"
#include "util/log.h"

namespace kiln::vk {

std::vector<size_t> candidatesToRegister(const KernelCreateInfo& info, const std::vector<std::string>& names) {
  if (!info.tunedCandidate.empty()) {
    const auto found = std::find(names.begin(), names.end(), info.tunedCandidate);
    if (found != names.end()) return {static_cast<size_t>(found - names.begin())};
    log::warn("{}: the stored autotune choice '{}' is not a candidate of this kernel; using its default",
              info.node.label(), info.tunedCandidate);
    return {0};
  }
  if (!info.autotune) return {0};
  std::vector<size_t> all(names.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

WorkgroupTunedKernel::WorkgroupTunedKernel(const KernelCreateInfo& info) {
  static const std::vector<uint32_t> kSizes = {64, 32, 128, 256};  // the default first
  std::vector<std::string> names;
  for (uint32_t size : kSizes) names.push_back(localSizeName(size));
  for (size_t i : candidatesToRegister(info, names)) sizes_.push_back(kSizes[i]);
}

uint32_t WorkgroupTunedKernel::useTunedShader(const ShaderVariant& variant) {
  std::vector<uint32_t> indices;
  for (uint32_t size : sizes_) {
    ShaderVariant sized = variant;
    sized.localSizeX = size;
    indices.push_back(useShader(std::move(sized)));
  }
  families_.push_back(std::move(indices));
  return static_cast<uint32_t>(families_.size() - 1);
}

}  // namespace kiln::vk
