// Where the Vulkan pipeline cache file lives by default. The engine leaves the cache off unless
// kiln.vulkan.pipeline_cache_path is set; `kiln` (and later kiln-studio) set it to defaultPipelineCachePath.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln {

// XXH64 of the model file's bytes, as 16 lower-case hex digits. NO_SUCHFILE when it cannot be read.
KILN_EXPORT Result<std::string> modelContentHash(const std::string& modelPath);

// `$XDG_CACHE_HOME/kiln/<modelContentHash>.vkcache`, with `$HOME/.cache` when XDG_CACHE_HOME is unset, empty or
// relative (the XDG rule). NO_SUCHFILE when the model cannot be read; FAIL when neither variable gives a folder.
KILN_EXPORT Result<std::string> defaultPipelineCachePath(const std::string& modelPath);

// What a pipeline cache file records, and whether the current device would use it.
struct KILN_EXPORT PipelineCacheFileInfo {
  std::string path;
  uint64_t fileSize = 0;
  uint32_t formatVersion = 0;
  std::string engineVersion;  // the engine that wrote it
  uint32_t vendorId = 0, deviceId = 0, driverId = 0, driverVersion = 0;
  std::string apiVersion, pipelineCacheUuid;
  uint32_t spirvEntries = 0;
  uint64_t spirvBytes = 0, driverBlobBytes = 0;
  // Against `against` (the live device): usable, else the reason it would be a cache miss (environment or damage).
  bool usable = false;
  std::string reason;
  bool damaged = false;  // the reason is damage (a failed integrity or structure check), not another environment
  std::string driverBlobReason;  // why its driver blob would be dropped while the SPIR-V is kept ("" if not)
  std::string against;
};

// Reads the header of the pipeline cache file at `path` and checks the whole file against the Vulkan device
// `deviceSelector` picks (index or name substring; empty: the one a compile would pick). NO_SUCHFILE when missing;
// INVALID_GRAPH when it is not a pipeline cache file at all (a damaged one is reported, not an error).
KILN_EXPORT Result<PipelineCacheFileInfo> inspectPipelineCacheFile(const std::string& path, const std::string& deviceSelector = "");

// "context_binary" or "pipeline_cache" from the file's magic; NO_SUCHFILE when missing, INVALID_GRAPH otherwise.
KILN_EXPORT Result<std::string> kilnFileKind(const std::string& path);

}  // namespace kiln
