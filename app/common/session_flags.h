// Session flags kiln and kiln-studio share: `--config KEY=VALUE` entries, the `--ep` list and the names of the
// execution providers, mapped onto kiln::SessionOptions in one place.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/provider_names.h"
#include "kiln/session_options.h"
#include "kiln/status.h"

namespace kiln::app {

// The short names kiln.execution_providers takes, and the names sessions report (PartitionReport, partitions()).
// (the engine's, kiln/provider_names.h, under the names the faces use).
inline constexpr const char* kCpuProvider = kCpuProviderShortName;
inline constexpr const char* kVulkanProvider = kVulkanProviderShortName;
inline constexpr const char* kCpuProviderName = kCpuExecutionProvider;
inline constexpr const char* kVulkanProviderName = kVulkanExecutionProvider;
// The order tools use when they want the GPU with the CPU as fallback (the studio's graph view, kiln bench).
inline constexpr const char* kGpuFirstProviders = kDefaultExecutionProviders;

// "NAME=VALUE" split at the first '='; INVALID_ARGUMENT naming the option `what` otherwise.
Result<std::pair<std::string, std::string>> splitAssignment(const std::string& text, const char* what);
// Adds each "KEY=VALUE" (--config) to `options`; INVALID_ARGUMENT for a malformed entry or an unknown kiln.* key.
Status applyConfigEntries(const std::vector<std::string>& entries, SessionOptions& options);
// --ep: a comma-separated list of cpu and vulkan in preference order, set as kiln.execution_providers; an empty
// list sets nothing (the session's default). INVALID_ARGUMENT for any other name.
Status applyExecutionProviders(const std::string& list, SessionOptions& options);

}  // namespace kiln::app
