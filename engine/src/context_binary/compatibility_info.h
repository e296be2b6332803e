// The compatibility info a ctx model records for its context binary (metadata ep_compatibility_info.
// VulkanExecutionProvider, as onnxruntime's EPs record theirs): the binary's format and readable engine versions,
// its target kind, whether it holds a driver pipeline cache, what its SPIR-V needs (features, limits) and the
// producer device's identity: every header fact judge() weighs, so "optimal" and "unsupported" are answered from
// the model's metadata alone, without reading the binary.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "context_binary/format.h"
#include "device/device_info.h"
#include "kiln/context_binary.h"
#include "kiln/status.h"

namespace kiln::ctxbin {

// "kiln;version=0.4.0;binary_format=1.0;readable=0.1.0-0.1023.1023;target=device;driver_cache=1;vendor_id=65541;
// ...;device=llvmpipe (LLVM 15.0.6, 256 bits);driver=Mesa 22.3.6" for the binary `file` compiled for `target`
// (names come from `target`, numbers from the binary's header; ';' and '%' in names are %-escaped).
// INVALID_GRAPH when `file` is no readable binary.
Result<std::string> compatibilityInfoFor(std::span<const std::byte> file, const vk::DeviceInfo& target);
// The same from a header and section table the caller produced (a binary still being streamed).
std::string compatibilityInfoFor(const Header& header, const std::vector<SectionEntry>& sections,
                                 const vk::DeviceInfo& target);

// What a recorded info string alone says about `device`: `unsupported` (with judge()'s reasons) when its format,
// readable versions, features or limits exclude it; `optimal` when every identity field matches and the binary is
// a device compile holding a driver cache; nullopt when the binary itself must be judged (an info string from an
// older Kiln or a foreign one, or a fitting device that differs: judge() words the `compatible` reasons).
std::optional<CompatibilityVerdict> judgeCompatibilityInfo(const std::string& info, const vk::DeviceInfo& device,
                                                           const std::string& against);

}  // namespace kiln::ctxbin
