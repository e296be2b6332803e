#include "session_flags.h"

namespace kiln::app {

Result<std::pair<std::string, std::string>> splitAssignment(const std::string& text, const char* what) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(what) + " '" + text + "' must look like NAME=VALUE");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Status applyConfigEntries(const std::vector<std::string>& entries, SessionOptions& options) {
  for (const auto& entry : entries) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "--config '" + entry + "' must look like KEY=VALUE");
    }
    KILN_RETURN_IF_ERROR(options.addConfigEntry(entry.substr(0, eq), entry.substr(eq + 1)));
  }
  return Status::ok();
}

Status applyExecutionProviders(const std::string& list, SessionOptions& options) {
  if (list.empty()) return Status::ok();
  size_t pos = 0;
  while (true) {
    const size_t comma = list.find(',', pos);
    const std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (name != kCpuProvider && name != kVulkanProvider) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "--ep takes a comma-separated list of cpu and vulkan, got '" + list + "'");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return options.addConfigEntry("kiln.execution_providers", list);
}

}  // namespace kiln::app
