// Compute pipelines of one device, created once per variant (ncnn's in-process artifact cache): every session on
// the device shares them. Thread-safe.
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ep/vulkan/shader_library.h"
#include "kiln/status.h"

namespace kiln::vk {

class Device;

struct Pipeline {
  std::string key;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  uint32_t localSize[3] = {1, 1, 1};
};

class PipelineRegistry {
 public:
  explicit PipelineRegistry(Device& device);
  ~PipelineRegistry();

  struct Stats {
    double createMs = 0;
    bool created = false;  // false: found in the registry
  };
  // The pipeline for `variant` built from `spirv`, created on first request.
  Result<const Pipeline*> get(const ShaderVariant& variant, const std::vector<uint32_t>& spirv, Stats* stats = nullptr);
  // The pipeline for `variant` if it exists already.
  const Pipeline* find(const std::string& key) const;

 private:
  Device& device_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace kiln::vk
