#include "vulkan_floor_vulkan.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>

namespace kiln::vkfloor {
namespace {

Status failed(const char* what, VkResult result) {
  return Status(StatusCode::EP_FAIL, std::string(what) + " failed: " + vkResultText(result));
}

#define FLOOR_VK(call, what)                                                   \
  do {                                                                         \
    if (const VkResult r_ = (call); r_ != VK_SUCCESS) return failed(what, r_); \
  } while (0)

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A compute-only family when there is one (as the engine prefers), else any with compute; else UINT32_MAX.
uint32_t computeQueueFamily(VkPhysicalDevice device) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  uint32_t chosen = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (chosen == UINT32_MAX || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) chosen = i;
  }
  return chosen;
}

bool hasExtension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

std::string vkResultText(VkResult result) {
  const char* name = nullptr;
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      name = "VK_ERROR_OUT_OF_HOST_MEMORY";
      break;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      name = "VK_ERROR_OUT_OF_DEVICE_MEMORY";
      break;
    case VK_ERROR_INITIALIZATION_FAILED:
      name = "VK_ERROR_INITIALIZATION_FAILED";
      break;
    case VK_ERROR_DEVICE_LOST:
      name = "VK_ERROR_DEVICE_LOST";
      break;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      name = "VK_ERROR_INCOMPATIBLE_DRIVER";
      break;
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      name = "VK_ERROR_EXTENSION_NOT_PRESENT";
      break;
    case VK_ERROR_FEATURE_NOT_PRESENT:
      name = "VK_ERROR_FEATURE_NOT_PRESENT";
      break;
    case VK_ERROR_INVALID_SHADER_NV:
      name = "VK_ERROR_INVALID_SHADER_NV";
      break;
    case VK_TIMEOUT:
      name = "VK_TIMEOUT";
      break;
    default:
      break;
  }
  const std::string number = "VkResult " + std::to_string(static_cast<int>(result));
  return name ? std::string(name) + " (" + number + ")" : number;
}

Result<std::unique_ptr<RawVulkan>> RawVulkan::create(const std::string& selector) {
  std::unique_ptr<RawVulkan> vulkan(new RawVulkan());
  KILN_RETURN_IF_ERROR(vulkan->initialize(selector));
  return vulkan;
}

RawVulkan::~RawVulkan() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    for (VkPipeline p : pipelines_) vkDestroyPipeline(device_, p, nullptr);
    for (VkPipelineLayout l : layouts_) vkDestroyPipelineLayout(device_, l, nullptr);
    for (VkDescriptorSetLayout l : setLayouts_) vkDestroyDescriptorSetLayout(device_, l, nullptr);
    if (cache_) vkDestroyPipelineCache(device_, cache_, nullptr);
    for (VkBuffer b : buffers_) vkDestroyBuffer(device_, b, nullptr);
    for (VkDeviceMemory m : memories_) vkFreeMemory(device_, m, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Status RawVulkan::initialize(const std::string& selector) {
  const auto started = std::chrono::steady_clock::now();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kiln_vulkan_floor";
  app.pEngineName = "kiln";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instanceInfo.pApplicationInfo = &app;
  if (const VkResult r = vkCreateInstance(&instanceInfo, nullptr, &instance_); r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    return Status(StatusCode::EP_FAIL,
                  "no usable Vulkan driver: vkCreateInstance returned " + vkResultText(r));
  }
  instanceMs_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  KILN_ASSIGN_OR_RETURN(physical_, pick(selector));
  queueFamily_ = computeQueueFamily(physical_);
  pushDescriptors_ = hasExtension(physical_, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  // The features the engine enables: only those its shaders may use, where the device has them.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11};
  VkPhysicalDeviceFeatures2 available{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  const bool vulkan12 = properties_.apiVersion >= VK_API_VERSION_1_2;
  if (vulkan12) available.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(physical_, &available);
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &e11};
  VkPhysicalDeviceFeatures2 enabled{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enabled.features.shaderInt64 = available.features.shaderInt64;
  if (vulkan12) {
    enabled.pNext = &e12;
    e12.shaderFloat16 = f12.shaderFloat16;
    e12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
    e11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = queueFamily_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  const char* pushDescriptor = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enabled};
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queue;
  deviceInfo.enabledExtensionCount = pushDescriptors_ ? 1 : 0;
  deviceInfo.ppEnabledExtensionNames = pushDescriptors_ ? &pushDescriptor : nullptr;
  if (const VkResult r = vkCreateDevice(physical_, &deviceInfo, nullptr, &device_); r != VK_SUCCESS) {
    device_ = VK_NULL_HANDLE;
    return failed("vkCreateDevice", r);
  }
  vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);
  return Status::ok();
}

Result<VkPhysicalDevice> RawVulkan::pick(const std::string& selector) {
  uint32_t count = 0;
  FLOOR_VK(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  FLOOR_VK(vkEnumeratePhysicalDevices(instance_, &count, devices.data()), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDeviceProperties> properties(count);
  std::vector<bool> usable(count);
  std::string known;
  for (uint32_t i = 0; i < count; ++i) {
    vkGetPhysicalDeviceProperties(devices[i], &properties[i]);
    usable[i] =
        properties[i].apiVersion >= VK_API_VERSION_1_1 && computeQueueFamily(devices[i]) != UINT32_MAX;
    if (usable[i]) known += (known.empty() ? "" : ", ") + std::to_string(i) + ": " + properties[i].deviceName;
  }
  if (known.empty())
    return Status(StatusCode::EP_FAIL, "no Vulkan 1.1 device with a compute queue was found");
  int chosen = -1;
  if (!selector.empty()) {
    const bool numeric =
        std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
    for (uint32_t i = 0; i < count && chosen < 0; ++i) {
      const bool match = numeric ? std::to_string(i) == selector
                                 : lower(properties[i].deviceName).find(lower(selector)) != std::string::npos;
      if (usable[i] && match) chosen = static_cast<int>(i);
    }
    if (chosen < 0) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "--device '" + selector + "' matches no Vulkan device (have " + known + ")");
    }
  }
  for (VkPhysicalDeviceType type :
       {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
        VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_OTHER, VK_PHYSICAL_DEVICE_TYPE_CPU}) {
    for (uint32_t i = 0; i < count && chosen < 0; ++i) {
      if (usable[i] && properties[i].deviceType == type) chosen = static_cast<int>(i);
    }
  }
  properties_ = properties[static_cast<size_t>(chosen)];
  name_ = properties_.deviceName;
  VkPhysicalDeviceMaintenance3Properties maintenance{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &maintenance};
  VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver};
  vkGetPhysicalDeviceProperties2(devices[static_cast<size_t>(chosen)], &properties2);
  driverInfo_ = driver.driverInfo;
  maxAllocation_ = maintenance.maxMemoryAllocationSize;
  return devices[static_cast<size_t>(chosen)];
}

Status RawVulkan::createPipelines(const FloorPlan& plan) {
  if (plan.pushConstantBytes > properties_.limits.maxPushConstantsSize) {
    return Status(StatusCode::EP_FAIL, "the binary's " + std::to_string(plan.pushConstantBytes) +
                                           " push-constant bytes exceed the device's " +
                                           std::to_string(properties_.limits.maxPushConstantsSize));
  }
  VkPipelineCacheCreateInfo cacheInfo{
      VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};  // empty: nothing seeds it
  FLOOR_VK(vkCreatePipelineCache(device_, &cacheInfo, nullptr, &cache_), "vkCreatePipelineCache");
  for (const PipelineRecipe& recipe : plan.pipelines) {
    std::vector<VkDescriptorSetLayoutBinding> bindings(recipe.bindings);
    for (uint32_t i = 0; i < recipe.bindings; ++i) {
      bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    if (pushDescriptors_) setInfo.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    setInfo.bindingCount = recipe.bindings;
    setInfo.pBindings = bindings.data();
    VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
    FLOOR_VK(vkCreateDescriptorSetLayout(device_, &setInfo, nullptr, &setLayout),
             "vkCreateDescriptorSetLayout");
    setLayouts_.push_back(setLayout);

    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, plan.pushConstantBytes};
    VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &setLayout;
    layoutInfo.pushConstantRangeCount = 1;
    layoutInfo.pPushConstantRanges = &push;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    FLOOR_VK(vkCreatePipelineLayout(device_, &layoutInfo, nullptr, &layout), "vkCreatePipelineLayout");
    layouts_.push_back(layout);

    VkShaderModuleCreateInfo moduleInfo{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    moduleInfo.codeSize = recipe.spirv.size_bytes();
    moduleInfo.pCode = recipe.spirv.data();
    VkShaderModule module = VK_NULL_HANDLE;
    FLOOR_VK(vkCreateShaderModule(device_, &moduleInfo, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    const VkResult created = vkCreateComputePipelines(device_, cache_, 1, &info, nullptr, &pipeline);
    vkDestroyShaderModule(device_, module, nullptr);
    if (created != VK_SUCCESS) {
      return Status(StatusCode::EP_FAIL,
                    "vkCreateComputePipelines failed for '" + recipe.key + "': " + vkResultText(created));
    }
    pipelines_.push_back(pipeline);
  }
  return Status::ok();
}

Result<VkDeviceMemory> RawVulkan::allocate(VkBuffer buffer, VkMemoryPropertyFlags required,
                                           VkMemoryPropertyFlags preferred, bool* hostVisible) {
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device_, buffer, &requirements);
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory);
  uint32_t type = UINT32_MAX;
  for (int pass = 0; pass < 3 && type == UINT32_MAX; ++pass) {
    // Pass 0: required + preferred; 1: required; 2: anything the buffer allows (the engine's fallback).
    const VkMemoryPropertyFlags wanted = pass == 0 ? required | preferred : pass == 1 ? required : 0;
    for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; ++i) {
      if ((requirements.memoryTypeBits & (1u << i)) &&
          (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
        type = i;
    }
  }
  if (type == UINT32_MAX)
    return Status(StatusCode::EP_FAIL, "no Vulkan memory type can hold a storage buffer");
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  *hostVisible = (memory.memoryTypes[type].propertyFlags & host) == host;
  VkMemoryAllocateInfo allocInfo{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocInfo.allocationSize = requirements.size;
  allocInfo.memoryTypeIndex = type;
  VkDeviceMemory allocated = VK_NULL_HANDLE;
  FLOOR_VK(vkAllocateMemory(device_, &allocInfo, nullptr, &allocated), "vkAllocateMemory");
  memories_.push_back(allocated);
  FLOOR_VK(vkBindBufferMemory(device_, buffer, allocated, 0), "vkBindBufferMemory");
  return allocated;
}

Status RawVulkan::uploadWeights(const FloorPlan& plan) {
  // Each tensor at an offset a shader can bind, as the engine's allocator places them.
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(256, properties_.limits.minStorageBufferOffsetAlignment);
  std::vector<VkDeviceSize> offsets;
  VkDeviceSize total = 0;
  for (const UploadItem& item : plan.uploads) {
    offsets.push_back(total);
    total += alignUp(std::max<VkDeviceSize>(item.bytes, 4), alignment);
  }
  if (total == 0) return Status::ok();
  if (total > maxAllocation_) {
    // The engine spreads tensors over 64 MiB chunks; one allocation keeps the floor minimal for the models
    // Kiln runs.
    return Status(StatusCode::EP_FAIL, "the weights take " + std::to_string(total) +
                                           " bytes, more than one Vulkan "
                                           "allocation may hold on this device (" +
                                           std::to_string(maxAllocation_) + ")");
  }
  VkBufferCreateInfo bufferInfo{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bufferInfo.size = total;
  bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  FLOOR_VK(vkCreateBuffer(device_, &bufferInfo, nullptr, &buffer), "vkCreateBuffer");
  buffers_.push_back(buffer);
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  KILN_ASSIGN_OR_RETURN(VkDeviceMemory memory,
                        allocate(buffer, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host, &mappable_));
  if (!mappable_) return copyThroughStaging(buffer, plan, offsets, total);
  void* mapped = nullptr;
  FLOOR_VK(vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  for (size_t i = 0; i < plan.uploads.size(); ++i) {
    if (plan.uploads[i].bytes)
      std::memcpy(static_cast<char*>(mapped) + offsets[i], plan.uploads[i].data, plan.uploads[i].bytes);
  }
  return Status::ok();
}

Status RawVulkan::copyThroughStaging(VkBuffer target, const FloorPlan& plan,
                                     const std::vector<VkDeviceSize>& offsets, VkDeviceSize total) {
  VkBufferCreateInfo bufferInfo{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bufferInfo.size = total;
  bufferInfo.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer staging = VK_NULL_HANDLE;
  FLOOR_VK(vkCreateBuffer(device_, &bufferInfo, nullptr, &staging), "vkCreateBuffer");
  buffers_.push_back(staging);
  bool hostVisible = false;
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  KILN_ASSIGN_OR_RETURN(VkDeviceMemory memory,
                        allocate(staging, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &hostVisible));
  if (!hostVisible) return Status(StatusCode::EP_FAIL, "no host-visible Vulkan memory for a staging buffer");
  void* mapped = nullptr;
  FLOOR_VK(vkMapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  for (size_t i = 0; i < plan.uploads.size(); ++i) {
    if (plan.uploads[i].bytes)
      std::memcpy(static_cast<char*>(mapped) + offsets[i], plan.uploads[i].data, plan.uploads[i].bytes);
  }
  // One copy of the whole packed range, one submit, one wait.
  VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  poolInfo.queueFamilyIndex = queueFamily_;
  VkCommandPool pool = VK_NULL_HANDLE;
  FLOOR_VK(vkCreateCommandPool(device_, &poolInfo, nullptr, &pool), "vkCreateCommandPool");
  VkFence fence = VK_NULL_HANDLE;
  const auto release = [&] {
    if (fence) vkDestroyFence(device_, fence, nullptr);
    vkDestroyCommandPool(device_, pool, nullptr);
  };
  VkCommandBufferAllocateInfo commandInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  commandInfo.commandPool = pool;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = 1;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult result = vkAllocateCommandBuffers(device_, &commandInfo, &commands);
  if (result == VK_SUCCESS) result = vkCreateFence(device_, &fenceInfo, nullptr, &fence);
  if (result == VK_SUCCESS) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    result = vkBeginCommandBuffer(commands, &begin);
  }
  if (result == VK_SUCCESS) {
    const VkBufferCopy region{0, 0, total};
    vkCmdCopyBuffer(commands, staging, target, 1, &region);
    result = vkEndCommandBuffer(commands);
  }
  if (result == VK_SUCCESS) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    result = vkQueueSubmit(queue_, 1, &submit, fence);
  }
  if (result == VK_SUCCESS) result = vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);
  release();
  if (result != VK_SUCCESS) return failed("the staging copy of the weights", result);
  return Status::ok();
}

}  // namespace kiln::vkfloor
