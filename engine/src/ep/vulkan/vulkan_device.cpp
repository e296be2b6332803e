#include "ep/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <map>

#include "ep/vulkan/memory_allocator.h"
#include "ep/vulkan/pipeline_registry.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::vk {
namespace {

// The process-wide instance; created on first use and kept for the process lifetime (drivers such as Mesa
// register atexit handlers that expect the instance to stay valid until then).
struct InstanceState {
  VkInstance instance = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical;
  std::vector<DeviceInfo> infos;
  Status status;
};

VulkanDeviceType deviceType(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return VulkanDeviceType::DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return VulkanDeviceType::INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return VulkanDeviceType::VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return VulkanDeviceType::CPU;
    default: return VulkanDeviceType::OTHER;
  }
}

bool hasExtension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

uint32_t computeQueueFamily(VkPhysicalDevice device, bool* timestamps) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  // Prefer a compute-only family (async compute on discrete GPUs), else any with compute.
  uint32_t chosen = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (chosen == UINT32_MAX || !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) chosen = i;
  }
  if (chosen != UINT32_MAX && timestamps) *timestamps = families[chosen].timestampValidBits > 0;
  return chosen;
}

DeviceInfo describe(VkPhysicalDevice device, uint32_t index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &driver};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &subgroup};
  vkGetPhysicalDeviceProperties2(device, &props);
  const VkPhysicalDeviceProperties& p = props.properties;
  info.name = p.deviceName;
  info.type = deviceType(p.deviceType);
  info.vendorId = p.vendorID;
  info.deviceId = p.deviceID;
  info.apiVersion = p.apiVersion;
  info.driverVersion = p.driverVersion;
  info.driverId = driver.driverID;
  info.driverName = driver.driverName;
  info.driverInfo = driver.driverInfo;
  std::memcpy(info.pipelineCacheUuid.data(), p.pipelineCacheUUID, 16);
  info.subgroupSize = std::max(1u, subgroup.subgroupSize);
  info.subgroupArithmetic = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                            (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
  info.maxStorageBufferRange = p.limits.maxStorageBufferRange;
  info.maxPushConstantsSize = p.limits.maxPushConstantsSize;
  info.maxComputeWorkGroupInvocations = p.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.maxComputeWorkGroupCount[i] = p.limits.maxComputeWorkGroupCount[i];
    info.maxComputeWorkGroupSize[i] = p.limits.maxComputeWorkGroupSize[i];
  }
  info.minStorageBufferOffsetAlignment = std::max<uint64_t>(4, p.limits.minStorageBufferOffsetAlignment);
  info.timestampPeriodNs = p.limits.timestampPeriod;

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  if (p.apiVersion >= VK_API_VERSION_1_2) {
    vkGetPhysicalDeviceFeatures2(device, &features);
    info.shaderFloat16 = f12.shaderFloat16;
    info.storageBuffer8Bit = f12.storageBuffer8BitAccess;
    info.storageBuffer16Bit = f11.storageBuffer16BitAccess;
  } else {
    features.pNext = nullptr;
    vkGetPhysicalDeviceFeatures2(device, &features);
  }
  info.shaderInt64 = features.features.shaderInt64;
  info.pushDescriptors = hasExtension(device, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) info.deviceLocalBytes += memory.memoryHeaps[i].size;
  }
  const VkMemoryPropertyFlags unified = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((memory.memoryTypes[i].propertyFlags & unified) == unified) info.unifiedMemory = true;
  }
  computeQueueFamily(device, &info.timestampQueries);
  return info;
}

InstanceState& instanceState() {
  static InstanceState state = [] {
    InstanceState s;
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "kiln";
    app.pEngineName = "kiln";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo create{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    create.pApplicationInfo = &app;
    const VkResult result = vkCreateInstance(&create, nullptr, &s.instance);
    if (result != VK_SUCCESS) {
      s.status = Status(StatusCode::EP_FAIL, "no usable Vulkan driver: vkCreateInstance returned " + resultName(result) +
                                                 " (install mesa-vulkan-drivers for the CPU driver lavapipe)");
      return s;
    }
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(s.instance, &count, nullptr);
    s.physical.resize(count);
    vkEnumeratePhysicalDevices(s.instance, &count, s.physical.data());
    for (uint32_t i = 0; i < count; ++i) {
      DeviceInfo info = describe(s.physical[i], i);
      if (info.apiVersion < VK_API_VERSION_1_1 || computeQueueFamily(s.physical[i], nullptr) == UINT32_MAX) {
        log::debug("skipping Vulkan device '{}': needs Vulkan 1.1 and a compute queue", info.name);
        continue;
      }
      s.infos.push_back(std::move(info));
    }
    if (s.infos.empty()) s.status = Status(StatusCode::EP_FAIL, "no Vulkan 1.1 device with a compute queue was found");
    return s;
  }();
  return state;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

std::string resultName(VkResult result) {
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

Status check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return Status::ok();
  return Status(StatusCode::EP_FAIL, std::string(what) + " failed: " + resultName(result));
}

Result<std::vector<DeviceInfo>> enumerateDevices() {
  InstanceState& state = instanceState();
  if (!state.status.isOk() && state.infos.empty()) return state.status;
  return state.infos;
}

Result<DeviceInfo> selectDevice(const std::string& selector, bool allowCpu) {
  KILN_ASSIGN_OR_RETURN(const std::vector<DeviceInfo> devices, enumerateDevices());
  if (!selector.empty()) {
    const bool numeric = std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
    for (const auto& info : devices) {
      if (numeric ? std::to_string(info.index) == selector : lower(info.name).find(lower(selector)) != std::string::npos) {
        return info;
      }
    }
    std::string known;
    for (const auto& info : devices) known += (known.empty() ? "" : ", ") + std::to_string(info.index) + ": " + info.name;
    return Status(StatusCode::INVALID_ARGUMENT, "kiln.vulkan.device '" + selector + "' matches no Vulkan device (have " +
                                                    known + ")");
  }
  for (auto type : {VulkanDeviceType::DISCRETE, VulkanDeviceType::INTEGRATED, VulkanDeviceType::VIRTUAL,
                    VulkanDeviceType::OTHER}) {
    for (const auto& info : devices) {
      if (info.type == type) return info;
    }
  }
  if (allowCpu) {
    for (const auto& info : devices) {
      if (info.isCpu()) return info;
    }
  }
  return Status(StatusCode::EP_FAIL, "no Vulkan GPU was found (a CPU Vulkan device is used only when asked for: "
                                     "kiln.execution_providers naming vulkan, or kiln.vulkan.device)");
}

namespace {

// Open devices stay open for the life of the process, as ncnn's GPU instance does: a later session on the device
// finds its pipelines in the registry instead of creating them again (kiln bench's in-process mode). Never
// destroyed at exit: the driver may already be gone then, and the process's end releases the device anyway.
struct OpenDevices {
  std::mutex mutex;
  std::map<uint32_t, std::shared_ptr<Device>> byIndex;
};
OpenDevices& openDevices() {
  static auto* open = new OpenDevices();
  return *open;
}

}  // namespace

void Device::releaseUnused() {
  OpenDevices& open = openDevices();
  std::lock_guard lock(open.mutex);
  std::erase_if(open.byIndex, [](const auto& entry) { return entry.second.use_count() == 1; });
}

std::vector<uint32_t> Device::openIndices() {
  OpenDevices& open = openDevices();
  std::lock_guard lock(open.mutex);
  std::vector<uint32_t> indices;
  for (const auto& [index, device] : open.byIndex) indices.push_back(index);
  return indices;
}

Result<std::shared_ptr<Device>> Device::acquire(uint32_t index) {
  OpenDevices& open = openDevices();
  std::lock_guard lock(open.mutex);
  auto& devices = open.byIndex;
  if (auto it = devices.find(index); it != devices.end()) return it->second;
  std::shared_ptr<Device> device(new Device());
  Stopwatch clock;
  KILN_RETURN_IF_ERROR(device->initialize(index));
  device->createMs_ = clock.elapsedMs();
  devices[index] = device;
  return device;
}

Status Device::initialize(uint32_t index) {
  InstanceState& state = instanceState();
  KILN_RETURN_IF_ERROR(state.status);
  auto found = std::find_if(state.infos.begin(), state.infos.end(), [&](const DeviceInfo& d) { return d.index == index; });
  if (found == state.infos.end()) return Status(StatusCode::INVALID_ARGUMENT, "no Vulkan device " + std::to_string(index));
  info_ = *found;
  physical_ = state.physical[index];
  queueFamily_ = computeQueueFamily(physical_, nullptr);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = queueFamily_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  std::vector<const char*> extensions;
  if (info_.pushDescriptors) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  // Enable only what the shaders may use.
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderInt64 = info_.shaderInt64;
  if (info_.apiVersion >= VK_API_VERSION_1_2) {
    features.pNext = &f12;
    f12.shaderFloat16 = info_.shaderFloat16;
    f12.storageBuffer8BitAccess = info_.storageBuffer8Bit;
    f11.storageBuffer16BitAccess = info_.storageBuffer16Bit;
  }
  VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  KILN_RETURN_IF_ERROR(check(vkCreateDevice(physical_, &create, nullptr, &device_), "vkCreateDevice"));
  vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);
  if (info_.pushDescriptors) {
    pushDescriptor_ = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(vkGetDeviceProcAddr(device_, "vkCmdPushDescriptorSetKHR"));
  }
  pipelines_ = std::make_unique<PipelineRegistry>(*this);
  allocator_ = std::make_unique<MemoryAllocator>(*this);
  log::debug("Vulkan device {}: {} ({})", index, info_.name, info_.driverInfo);
  return Status::ok();
}

Device::~Device() {
  if (device_ == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device_);
  pipelines_.reset();
  allocator_.reset();
  vkDestroyDevice(device_, nullptr);
}

}  // namespace kiln::vk
