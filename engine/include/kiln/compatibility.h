// "Can this compiled model run here, and should I recompile?" answered without creating a session, in onnxruntime's
// four states (OrtCompiledModelCompatibility, GetModelCompatibilityForEpDevices / GetCompatibilityInfoFromModel).
// Kiln's three-way verdict maps onto them:
//   no Kiln EPContext node (a plain model, or only foreign ones)  -> NOT_APPLICABLE
//   optimal (same device and driver: the stored pipeline cache is used)  -> SUPPORTED_OPTIMAL
//   compatible (the SPIR-V and features fit; pipelines are recreated)   -> SUPPORTED_PREFER_RECOMPILATION
//   unsupported (format, engine version, a missing feature or limit, a missing or mismatched binary) -> UNSUPPORTED
// session.fail_on_suboptimal_compiled_model=1 refuses SUPPORTED_PREFER_RECOMPILATION, as in onnxruntime.
#pragma once

#include "kiln/export.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/context_binary.h"
#include "kiln/status.h"

namespace kiln {

class SessionOptions;  // kiln/session_options.h

enum class CompiledModelCompatibility { NOT_APPLICABLE, SUPPORTED_OPTIMAL, SUPPORTED_PREFER_RECOMPILATION, UNSUPPORTED };
// onnxruntime's names without the EP_ prefix: "NOT_APPLICABLE", "SUPPORTED_OPTIMAL", ...
KILN_EXPORT const char* compiledModelCompatibilityName(CompiledModelCompatibility value);
// The state a Kiln verdict maps to (table above).
KILN_EXPORT CompiledModelCompatibility compiledModelCompatibilityOf(Compatibility verdict);

// What a model is judged against: a device profile when `profilePath` is set, else the live Vulkan device
// `deviceSelector` picks (index or name substring; empty: the one a compile would pick); and, for a ctx model that
// recorded its compile (metadata kiln.compile_record), the source model now (`sourceModelPath`, else the source
// the record names when that file exists) and the compile options one would use now (`compileOptions`, if set).
struct KILN_EXPORT CompatibilityQuery {
  std::string deviceSelector;
  std::string profilePath;
  std::string sourceModelPath;
  const SessionOptions* compileOptions = nullptr;
};

struct KILN_EXPORT ModelCompatibility {
  CompiledModelCompatibility state = CompiledModelCompatibility::UNSUPPORTED;
  std::optional<Compatibility> verdict;  // Kiln's verdict (none for NOT_APPLICABLE)
  std::string fileKind;                  // "ctx_model", "context_binary" or "model"
  std::string against;                   // "device 0 (llvmpipe ...)" or "profile path/x.json"; empty if not judged
  std::vector<std::string> reasons;      // why not optimal; for NOT_APPLICABLE, why there is nothing to judge
  std::string compatibilityInfo;         // the model's ep_compatibility_info.VulkanExecutionProvider ("" if none)
  bool fromMetadata = false;             // answered from compatibilityInfo alone: no context binary was read
  std::string compileRecord;             // the ctx model's kiln.compile_record (JSON; "" if none)
  std::string sourceChecked;             // the source model whose content was compared with the record ("" if none)
};

// The model's ep_compatibility_info.VulkanExecutionProvider metadata ("" when it has none). NO_SUCHFILE /
// INVALID_PROTOBUF when the model cannot be read.
KILN_EXPORT Result<std::string> getCompatibilityInfoFromModel(const std::string& modelPath);
KILN_EXPORT Result<std::string> getCompatibilityInfoFromModel(std::span<const std::byte> modelBytes);

// Judges a ctx model, a context binary or a plain model at `path` against `target`. A ctx model is answered from
// its compatibility info when that proves `optimal` or `unsupported` (its binary files must still exist), else
// from its binaries, the worst verdict winning. A node whose binary is missing, escapes the model's folder or does
// not match the model is UNSUPPORTED with that reason. Errors only when the file cannot be read as any of the
// three, or the target (device, profile) is unavailable. A stale ctx model (compile_record: "stale: source changed",
// "stale: options changed", "stale: Kiln upgraded" among the reasons) is at best SUPPORTED_PREFER_RECOMPILATION,
// and UNSUPPORTED when its source changed (it would compute the old model).
KILN_EXPORT Result<ModelCompatibility> getModelCompatibility(const std::string& path, const CompatibilityQuery& query = {});
// The same for bytes in memory; a ctx model's file references resolve against `baseFolder` (empty: only embedded
// binaries can be judged).
KILN_EXPORT Result<ModelCompatibility> getModelCompatibility(std::span<const std::byte> bytes, const std::string& baseFolder,
                                                             const CompatibilityQuery& query = {});

}  // namespace kiln
