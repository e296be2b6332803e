// The compatibility verdict of a context binary against a device (live, or described by a profile).
#pragma once

#include "context_binary/context_binary.h"
#include "kiln/context_binary.h"

namespace kiln::ctxbin {

// Judges `binary` against `device`. `againstProfile`: the device is a profile, not a live device.
CompatibilityVerdict judge(const ContextBinary& binary, const vk::DeviceInfo& device, const std::string& against);
// The verdict for a file that could not be opened because of its format or engine version (unsupported with the
// reason); other open failures stay errors.
CompatibilityVerdict unsupportedFormat(const Status& openFailure, const std::string& against);
// True when `failure` (from ContextBinary::open) is about the format version rather than corruption.
bool isFormatVersionFailure(const Status& failure);

}  // namespace kiln::ctxbin
