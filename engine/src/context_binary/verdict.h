// The compatibility verdict of a context binary against a device (live, or described by a profile).
#pragma once

#include <optional>

#include "context_binary/context_binary.h"
#include "kiln/context_binary.h"

namespace kiln::ctxbin {

// Why a binary with header `h` cannot run on `device` at all (engine version outside its readable range, missing
// features, limits): empty when it can.
std::vector<std::string> unsupportedReasons(const Header& h, const vk::DeviceInfo& device);
// Judges `binary` against `device`. `againstProfile`: the device is a profile, not a live device.
CompatibilityVerdict judge(const ContextBinary& binary, const vk::DeviceInfo& device, const std::string& against);
// `unsupported` when the file at `path` is a context binary of another format major version (read from its first
// bytes, before anything else is trusted); nullopt when the version is readable. NO_SUCHFILE / INVALID_GRAPH when
// it is no context binary at all.
Result<std::optional<CompatibilityVerdict>> judgeFormatVersion(const std::string& path, const std::string& against);
// The same for a binary in memory.
Result<std::optional<CompatibilityVerdict>> judgeFormatVersion(std::span<const std::byte> bytes, const std::string& origin,
                                                               const std::string& against);

// Judges the binary at `path` against `device`: a binary of another format major version is a verdict
// (`unsupported`), not a read error. NO_SUCHFILE / INVALID_GRAPH when it cannot be read.
Result<CompatibilityVerdict> judgeFile(const std::string& path, const vk::DeviceInfo& device, const std::string& against);
// The same for a binary in memory (`origin` names it in messages).
Result<CompatibilityVerdict> judgeBytes(std::span<const std::byte> bytes, const std::string& origin,
                                        const vk::DeviceInfo& device, const std::string& against);

}  // namespace kiln::ctxbin
