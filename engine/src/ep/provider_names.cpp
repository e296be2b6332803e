#include "ep/provider_names.h"

#include <algorithm>
#include <sstream>

#include "kiln/config_keys.h"
#include "kiln/provider_names.h"

namespace kiln {
namespace {

std::string trimmed(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find_last_not_of(" \t") - start + 1);
}

}  // namespace

Result<std::vector<std::string>> configuredProviderNames(const SessionOptions& options) {
  std::vector<std::string> names;
  std::stringstream stream(options.configEntryOr(config::kExecutionProviders, kDefaultExecutionProviders));
  std::string name;
  while (std::getline(stream, name, ',')) {
    name = trimmed(name);
    if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (name != kCpuProviderShortName && name != kVulkanProviderShortName) {
      return Status(StatusCode::INVALID_ARGUMENT, "unknown execution provider '" + name +
                                                      "' in kiln.execution_providers (known: vulkan, cpu)");
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace kiln
