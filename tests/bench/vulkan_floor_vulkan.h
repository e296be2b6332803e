// The floor's Vulkan work, in raw Vulkan calls only (none of the engine's Vulkan classes): an instance and a
// logical device set up as the engine sets up its own (engine/src/ep/vulkan/vulkan_device.cpp: Vulkan 1.2
// instance, one compute queue, the same optional features and VK_KHR_push_descriptor when present), the
// pipelines of a plan created as PipelineRegistry::get creates them (one set layout, pipeline layout and
// shader module per pipeline, through one empty VkPipelineCache, as a cold process without a pipeline cache
// file has), and the plan's uploads written to device memory.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "vulkan_floor_plan.h"

namespace kiln::vkfloor {

// Instance, physical device, logical device, queue; destroys everything it created (pipelines and memory
// too).
class RawVulkan {
 public:
  // `selector`: an index in vkEnumeratePhysicalDevices order or a case-insensitive name substring; empty
  // picks the first GPU (discrete, integrated, virtual, other), else the first CPU device, as the engine does
  // for a context binary. EP_FAIL without a usable driver or device, INVALID_ARGUMENT when the selector
  // matches nothing.
  static Result<std::unique_ptr<RawVulkan>> create(const std::string& selector);
  ~RawVulkan();
  RawVulkan(const RawVulkan&) = delete;
  RawVulkan& operator=(const RawVulkan&) = delete;

  // Creates every pipeline of `plan` (descriptor set layout, pipeline layout, shader module, compute
  // pipeline).
  Status createPipelines(const FloorPlan& plan);
  // Writes every upload of `plan` into device memory: one device-local allocation (host-visible when the
  // device offers such a type, then written in place; otherwise through one staging buffer and one copy
  // submit).
  Status uploadWeights(const FloorPlan& plan);

  const std::string& deviceName() const { return name_; }
  const std::string& driverInfo() const { return driverInfo_; }
  bool pushDescriptors() const { return pushDescriptors_; }
  bool mappableMemory() const { return mappable_; }
  double instanceMs() const { return instanceMs_; }

 private:
  RawVulkan() = default;
  Status initialize(const std::string& selector);
  Result<VkPhysicalDevice> pick(const std::string& selector);
  Result<VkDeviceMemory> allocate(VkBuffer buffer, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred, bool* hostVisible);
  Status copyThroughStaging(VkBuffer target, const FloorPlan& plan, const std::vector<VkDeviceSize>& offsets,
                            VkDeviceSize total);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queueFamily_ = 0;
  VkPhysicalDeviceProperties properties_{};
  std::string name_, driverInfo_;
  bool pushDescriptors_ = false;
  bool mappable_ = false;
  VkDeviceSize maxAllocation_ = 0;  // VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize
  double instanceMs_ = 0;

  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSetLayout> setLayouts_;
  std::vector<VkPipelineLayout> layouts_;
  std::vector<VkPipeline> pipelines_;
  std::vector<VkBuffer> buffers_;
  std::vector<VkDeviceMemory> memories_;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)".
std::string vkResultText(VkResult result);

}  // namespace kiln::vkfloor
