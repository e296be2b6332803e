// Device profiles: a device's identity, features and limits as JSON, so a machine without the device can compile
// for it and a binary's requirements can be judged against it (engine/ARCHITECTURE.md, cross-compilation).
#pragma once

#include <string>
#include <string_view>

#include "device/device_info.h"
#include "kiln/status.h"

namespace kiln::vk {

constexpr int kDeviceProfileFormat = 1;

// The profile of `device` as pretty-printed JSON ({"kiln_device_profile": 1, "identity", "features", "limits"}).
std::string deviceProfileJson(const DeviceInfo& device);
// Parses a profile; INVALID_ARGUMENT names `origin` and the missing or mistyped field, or an unknown format.
Result<DeviceInfo> parseDeviceProfile(std::string_view json, const std::string& origin);
// Reads and parses a profile file; NO_SUCHFILE when it cannot be read.
Result<DeviceInfo> readDeviceProfile(const std::string& path);

}  // namespace kiln::vk
