// Compute pipelines of one device, created once per variant (ncnn's in-process artifact cache): every session on
// the device shares them. Thread-safe.
//
// The driver's VkPipelineCache is one per device too, owned here: pipelines are created once per device whatever
// the session, so one cache per device sees every pipeline creation. The Vulkan EP attaches it before its first
// pipeline, seeded from the pipeline cache file (kiln.vulkan.pipeline_cache_path) or empty; an `optimal` context
// binary merges its stored blob in; its data goes into pipeline cache files and context binaries.
#pragma once

#include <vulkan/vulkan.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
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
  // The pipeline for `variant` built from `spirv`, created on first request. Concurrent calls create different
  // variants in parallel; a second request for a variant being created waits for it (created once).
  // `withoutDriverCache`: created without the device's VkPipelineCache (the cold build a cache failure falls back to).
  Result<const Pipeline*> get(const ShaderVariant& variant, const std::vector<uint32_t>& spirv, Stats* stats = nullptr,
                              bool withoutDriverCache = false);
  // The pipeline for `variant` if it exists already.
  const Pipeline* find(const std::string& key) const;

  // Creates the device's VkPipelineCache on the first call and merges `blob` (a driver blob validated for this
  // device, or empty) into it; every pipeline created afterwards goes through it. A blob the driver refuses is
  // dropped (logged), never an error; EP_FAIL only when no VkPipelineCache can be created at all.
  Status attachDriverCache(std::span<const std::byte> blob);
  // vkGetPipelineCacheData of the device's VkPipelineCache (empty when none was attached).
  Result<std::vector<std::byte>> driverCacheData() const;

 private:
  // Creates one pipeline through `cache` (read under mutex_); called without mutex_ held.
  Result<std::unique_ptr<Pipeline>> create(const ShaderVariant& variant, const std::vector<uint32_t>& spirv,
                                           VkPipelineCache cache) const;

  Device& device_;
  mutable std::mutex mutex_;
  std::condition_variable created_;  // signalled when a variant leaves creating_
  std::set<std::string> creating_;   // variants some thread is creating (without holding mutex_)
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace kiln::vk
