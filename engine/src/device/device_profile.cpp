#include "device/device_profile.h"

#include <nlohmann/json.hpp>
#include <vulkan/vulkan.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kiln::vk {
namespace {

using nlohmann::json;

// Reads fields of one JSON object, remembering the first problem with its dotted path.
class FieldReader {
 public:
  FieldReader(const json& root, std::string origin) : root_(root), origin_(std::move(origin)) {}

  template <class T>
  void read(const char* section, const char* key, T& out) {
    if (!error_.empty()) return;
    const std::string path = std::string(section) + "." + key;
    auto s = root_.find(section);
    if (s == root_.end() || !s->is_object() || !s->contains(key)) {
      error_ = "missing field '" + path + "'";
      return;
    }
    const json& value = (*s)[key];
    try {
      if constexpr (std::is_same_v<T, bool>) {
        if (!value.is_boolean()) throw std::invalid_argument("not a boolean");
      } else if constexpr (std::is_integral_v<T>) {
        if (!value.is_number_unsigned()) throw std::invalid_argument("not a non-negative integer");
      } else if constexpr (std::is_floating_point_v<T>) {
        if (!value.is_number()) throw std::invalid_argument("not a number");
      } else if constexpr (std::is_same_v<T, std::array<uint32_t, 3>>) {
        if (!value.is_array() || value.size() != 3) throw std::invalid_argument("not an array of 3");
        for (const auto& item : value) {
          if (!item.is_number_unsigned()) throw std::invalid_argument("not an array of non-negative integers");
        }
      } else {
        if (!value.is_string()) throw std::invalid_argument("not a string");
      }
      out = value.get<T>();
    } catch (const std::exception& e) {
      error_ = "field '" + path + "' is " + e.what();
    }
  }

  Status status() const {
    if (error_.empty()) return Status::ok();
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin_ + ": " + error_);
  }

 private:
  const json& root_;
  std::string origin_;
  std::string error_;
};

}  // namespace

std::string deviceProfileJson(const DeviceInfo& d) {
  json profile = {
      {"kiln_device_profile", kDeviceProfileFormat},
      {"identity",
       {{"name", d.name}, {"type", vulkanDeviceTypeName(d.type)}, {"vendor_id", d.vendorId}, {"device_id", d.deviceId},
        {"api_version", d.apiVersion}, {"api_version_text", d.apiVersionString()}, {"driver_version", d.driverVersion}, {"driver_id", d.driverId},
        {"driver_name", d.driverName}, {"driver_info", d.driverInfo}, {"pipeline_cache_uuid", d.pipelineCacheUuidHex()}}},
      {"features",
       {{"subgroup_size", d.subgroupSize}, {"subgroup_arithmetic", d.subgroupArithmetic},
        {"shader_float16", d.shaderFloat16}, {"storage_buffer_16bit", d.storageBuffer16Bit},
        {"shader_int64", d.shaderInt64}, {"storage_buffer_8bit", d.storageBuffer8Bit},
        {"push_descriptors", d.pushDescriptors}, {"unified_memory", d.unifiedMemory},
        {"timestamp_queries", d.timestampQueries}, {"timestamp_period_ns", d.timestampPeriodNs}}},
      {"limits",
       {{"max_storage_buffer_range", d.maxStorageBufferRange}, {"max_push_constants_size", d.maxPushConstantsSize},
        {"max_compute_work_group_invocations", d.maxComputeWorkGroupInvocations},
        {"max_compute_work_group_count", d.maxComputeWorkGroupCount},
        {"max_compute_work_group_size", d.maxComputeWorkGroupSize},
        {"min_storage_buffer_offset_alignment", d.minStorageBufferOffsetAlignment},
        {"device_local_bytes", d.deviceLocalBytes}}}};
  return profile.dump(2) + "\n";
}

Result<DeviceInfo> parseDeviceProfile(std::string_view text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const std::exception& e) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin + " is not JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("kiln_device_profile")) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin + " lacks 'kiln_device_profile'");
  }
  if (root["kiln_device_profile"] != kDeviceProfileFormat) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin + " has format " +
                                                    root["kiln_device_profile"].dump() + "; this Kiln reads " +
                                                    std::to_string(kDeviceProfileFormat));
  }
  DeviceInfo d;
  FieldReader r(root, origin);
  std::string uuid, type;
  r.read("identity", "name", d.name);
  r.read("identity", "type", type);
  r.read("identity", "vendor_id", d.vendorId);
  r.read("identity", "device_id", d.deviceId);
  r.read("identity", "api_version", d.apiVersion);
  r.read("identity", "driver_version", d.driverVersion);
  r.read("identity", "driver_id", d.driverId);
  r.read("identity", "driver_name", d.driverName);
  r.read("identity", "driver_info", d.driverInfo);
  r.read("identity", "pipeline_cache_uuid", uuid);
  r.read("features", "subgroup_size", d.subgroupSize);
  r.read("features", "subgroup_arithmetic", d.subgroupArithmetic);
  r.read("features", "shader_float16", d.shaderFloat16);
  r.read("features", "storage_buffer_16bit", d.storageBuffer16Bit);
  r.read("features", "shader_int64", d.shaderInt64);
  r.read("features", "storage_buffer_8bit", d.storageBuffer8Bit);
  r.read("features", "push_descriptors", d.pushDescriptors);
  r.read("features", "unified_memory", d.unifiedMemory);
  r.read("features", "timestamp_queries", d.timestampQueries);
  r.read("features", "timestamp_period_ns", d.timestampPeriodNs);
  r.read("limits", "max_storage_buffer_range", d.maxStorageBufferRange);
  r.read("limits", "max_push_constants_size", d.maxPushConstantsSize);
  r.read("limits", "max_compute_work_group_invocations", d.maxComputeWorkGroupInvocations);
  r.read("limits", "max_compute_work_group_count", d.maxComputeWorkGroupCount);
  r.read("limits", "max_compute_work_group_size", d.maxComputeWorkGroupSize);
  r.read("limits", "min_storage_buffer_offset_alignment", d.minStorageBufferOffsetAlignment);
  r.read("limits", "device_local_bytes", d.deviceLocalBytes);
  KILN_RETURN_IF_ERROR(r.status());
  if (auto parsed = parseVulkanDeviceType(type); parsed.isOk()) {
    d.type = *parsed;
  } else {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin + ": 'identity.type' must be discrete, "
                                                    "integrated, virtual, cpu or other, got '" + type + "'");
  }
  if (uuid.size() != 32 || uuid.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin +
                                                    ": 'identity.pipeline_cache_uuid' must be 32 lower-case hex digits");
  }
  for (size_t i = 0; i < 16; ++i) d.pipelineCacheUuid[i] = static_cast<uint8_t>(std::stoi(uuid.substr(2 * i, 2), nullptr, 16));
  if (d.apiVersion < VK_API_VERSION_1_1) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin + " describes a device below Vulkan 1.1");
  }
  if (d.maxPushConstantsSize < 128 || d.subgroupSize == 0) {
    return Status(StatusCode::INVALID_ARGUMENT, "device profile " + origin +
                                                    ": limits below the Vulkan minimum (push constants >= 128, subgroup >= 1)");
  }
  return d;
}

Result<DeviceInfo> readDeviceProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot read device profile '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parseDeviceProfile(text.str(), "'" + path + "'");
}

}  // namespace kiln::vk
