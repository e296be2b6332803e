#include "context_binary/compatibility_info.h"

#include <charconv>
#include <map>

#include "context_binary/format.h"
#include "context_binary/verdict.h"
#include "kiln/version.h"

namespace kiln::ctxbin {
namespace {

constexpr const char* kProducer = "kiln";

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == ';') out += "%3B";
    else out += c;
  }
  return out;
}

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && text.compare(i, 3, "%25") == 0) {
      out += '%';
      i += 2;
    } else if (text[i] == '%' && text.compare(i, 3, "%3B") == 0) {
      out += ';';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// key -> value of "kiln;k=v;k=v"; empty when the string is not Kiln's.
std::map<std::string, std::string> parseInfo(const std::string& info) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  bool first = true;
  while (start <= info.size()) {
    size_t end = info.find(';', start);
    if (end == std::string::npos) end = info.size();
    const std::string part = info.substr(start, end - start);
    if (first) {
      if (part != kProducer) return {};
      first = false;
    } else if (auto eq = part.find('='); eq != std::string::npos) {
      fields[part.substr(0, eq)] = unescape(part.substr(eq + 1));
    }
    start = end + 1;
  }
  return fields;
}

std::optional<uint64_t> number(const std::map<std::string, std::string>& fields, const std::string& key) {
  auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (error != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
  return value;
}

// The requirement fields of an info string as a Header (readable versions, features, limits); nullopt when any is
// missing or malformed.
std::optional<Header> requirementsOf(const std::map<std::string, std::string>& fields) {
  Header h;
  auto readable = fields.find("readable");
  auto size = fields.find("workgroup_size");
  if (readable == fields.end() || size == fields.end()) return std::nullopt;
  const auto dash = readable->second.find('-');
  if (dash == std::string::npos) return std::nullopt;
  h.readableMin = packVersion(readable->second.substr(0, dash));
  h.readableMax = packVersion(readable->second.substr(dash + 1));
  const auto features = number(fields, "required_features"), subgroup = number(fields, "subgroup_size");
  const auto invocations = number(fields, "workgroup_invocations"), push = number(fields, "push_constant_bytes");
  if (!features || !subgroup || !invocations || !push) return std::nullopt;
  h.requiredFeatures = static_cast<uint32_t>(*features);
  h.subgroupSize = static_cast<uint32_t>(*subgroup);
  h.requiredWorkgroupInvocations = static_cast<uint32_t>(*invocations);
  h.requiredPushConstantBytes = static_cast<uint32_t>(*push);
  size_t start = 0;
  for (size_t axis = 0; axis < 3; ++axis) {
    const size_t comma = size->second.find(',', start);
    const auto value = number({{"v", size->second.substr(start, comma == std::string::npos ? std::string::npos : comma - start)}}, "v");
    if (!value || (axis < 2 && comma == std::string::npos)) return std::nullopt;
    h.requiredWorkgroupSize[axis] = static_cast<uint32_t>(*value);
    start = comma + 1;
  }
  return h;
}

}  // namespace

Result<std::string> compatibilityInfoFor(std::span<const std::byte> file, const vk::DeviceInfo& target) {
  KILN_ASSIGN_OR_RETURN(const ParsedHeader parsed, parseHeader(file));
  return compatibilityInfoFor(parsed.header, parsed.sections, target);
}

std::string compatibilityInfoFor(const Header& h, const std::vector<SectionEntry>& sections, const vk::DeviceInfo& target) {
  bool driverCache = false;
  for (const auto& section : sections) driverCache |= section.kind == SectionKind::DRIVER_CACHE && section.size > 0;
  return std::string(kProducer) + ";version=" + engineVersion() + ";binary_format=" + std::to_string(h.formatMajor) +
         "." + std::to_string(h.formatMinor) + ";readable=" + unpackVersion(h.readableMin) + "-" +
         unpackVersion(h.readableMax) + ";target=" + (h.target == TargetKind::PROFILE ? "profile" : "device") +
         ";driver_cache=" + (driverCache ? "1" : "0") + ";vendor_id=" + std::to_string(h.vendorId) +
         ";device_id=" + std::to_string(h.deviceId) + ";driver_id=" + std::to_string(h.driverId) +
         ";driver_version=" + std::to_string(h.driverVersion) + ";api_version=" + std::to_string(h.apiVersion) +
         ";required_features=" + std::to_string(h.requiredFeatures) + ";subgroup_size=" + std::to_string(h.subgroupSize) +
         ";workgroup_invocations=" + std::to_string(h.requiredWorkgroupInvocations) + ";workgroup_size=" +
         std::to_string(h.requiredWorkgroupSize[0]) + "," + std::to_string(h.requiredWorkgroupSize[1]) + "," +
         std::to_string(h.requiredWorkgroupSize[2]) + ";push_constant_bytes=" + std::to_string(h.requiredPushConstantBytes) +
         ";pipeline_cache_uuid=" + target.pipelineCacheUuidHex() + ";device=" + escape(target.name) +
         ";driver=" + escape(target.driverInfo);
}

std::optional<CompatibilityVerdict> judgeCompatibilityInfo(const std::string& info, const vk::DeviceInfo& device,
                                                           const std::string& against) {
  const auto fields = parseInfo(info);
  if (fields.empty()) return std::nullopt;
  // Format and readable versions first: a binary this engine cannot read is unsupported whatever the device.
  if (auto format = fields.find("binary_format"); format != fields.end()) {
    const std::string& text = format->second;
    const auto dot = text.find('.');
    const auto major = number({{"v", text.substr(0, dot)}}, "v");
    const auto minor = dot == std::string::npos ? std::optional<uint64_t>(0) : number({{"v", text.substr(dot + 1)}}, "v");
    if (major && minor && *major != kFormatMajor && *major <= 0xffff && *minor <= 0xffff) {
      return CompatibilityVerdict{Compatibility::UNSUPPORTED,
                                  {unreadableFormatMessage(static_cast<uint16_t>(*major), static_cast<uint16_t>(*minor))},
                                  against};
    }
  }
  // What the binary needs, as its header says: judged as the binary itself would be (verdict.cpp).
  if (auto requirements = requirementsOf(fields)) {
    if (auto reasons = unsupportedReasons(*requirements, device); !reasons.empty()) {
      return CompatibilityVerdict{Compatibility::UNSUPPORTED, std::move(reasons), against};
    }
  } else {
    return std::nullopt;  // an info string from a Kiln that recorded no requirements: the binary must be read
  }
  auto text = [&](const char* key) {
    auto it = fields.find(key);
    return it == fields.end() ? std::optional<std::string>() : std::optional<std::string>(it->second);
  };
  const bool optimal = text("target") == "device" && text("driver_cache") == "1" &&
                       number(fields, "vendor_id") == device.vendorId && number(fields, "device_id") == device.deviceId &&
                       number(fields, "driver_id") == device.driverId &&
                       number(fields, "driver_version") == device.driverVersion &&
                       number(fields, "api_version") == device.apiVersion &&
                       text("pipeline_cache_uuid") == device.pipelineCacheUuidHex() && text("device") == device.name &&
                       text("driver") == device.driverInfo;
  if (optimal) return CompatibilityVerdict{Compatibility::OPTIMAL, {}, against};
  return std::nullopt;
}

}  // namespace kiln::ctxbin
