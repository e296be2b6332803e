// The EPContext contract in one place: the op, its schema attributes (ONNX Runtime's com.microsoft EPContext),
// the source names the Vulkan EP writes and accepts, and the metadata keys of a ctx model.
#pragma once

#include <string>

#include "kiln/provider_names.h"

namespace kiln::epctx {

inline constexpr const char* kOpType = "EPContext";
inline constexpr const char* kDomain = "com.microsoft";
inline constexpr int kDomainVersion = 1;

// Schema attributes (com.microsoft EPContext, since_version 1).
inline constexpr const char* kMainContext = "main_context";                  // INT, default 1
inline constexpr const char* kEpCacheContext = "ep_cache_context";           // STRING: payload or relative path
inline constexpr const char* kEmbedMode = "embed_mode";                      // INT, schema default 1
inline constexpr const char* kEpSdkVersion = "ep_sdk_version";               // STRING: Kiln's version
inline constexpr const char* kOnnxModelFilename = "onnx_model_filename";     // STRING: the source model's file name
inline constexpr const char* kHardwareArchitecture = "hardware_architecture";  // STRING: target device + driver
inline constexpr const char* kPartitionName = "partition_name";              // STRING: graph name in the binary
inline constexpr const char* kSource = "source";                             // STRING: the owning EP
inline constexpr const char* kNotes = "notes";                               // STRING: a small JSON object
inline constexpr const char* kMaxSize = "max_size";                          // INT, default 0 (unused by Vulkan)

// What the Vulkan EP writes in `source`, and the names it claims on load.
inline constexpr const char* kVulkanSource = kVulkanExecutionProvider;
inline constexpr const char* kVulkanShortSource = "Vulkan";
bool isVulkanSource(const std::string& source);

// metadata_props of a ctx model.
// onnxruntime's key: "ep_compatibility_info." + the EP's name.
inline constexpr const char* kCompatibilityInfoKeyPrefix = "ep_compatibility_info.";
inline const std::string kCompatibilityInfoKey = std::string(kCompatibilityInfoKeyPrefix) + kVulkanExecutionProvider;
// kBinaryHashKeyPrefix + <ep_cache_context path> -> content id of that binary (16 hex digits).
inline constexpr const char* kBinaryHashKeyPrefix = "kiln.context_binary_hash.";
// The digest of the declared types of the graph inputs and outputs EPContext nodes read and write
// (io_signature.h: declaredIoDigest), as written.
inline constexpr const char* kIoDigestKey = "kiln.epcontext_io_digest";

// What a partition report names as the binary of an EPContext node that embeds it.
inline constexpr const char* kEmbeddedReference = "embedded";

// File names: <stem>_ctx.onnx beside <stem>_vulkan.bin (kiln/compile_outputs.h names the binary).
inline constexpr const char* kCtxModelSuffix = "_ctx.onnx";

}  // namespace kiln::epctx
