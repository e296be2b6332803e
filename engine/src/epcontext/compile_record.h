// What a compile depended on, recorded in the ctx model (metadata kiln.compile_record, JSON) and in its context
// binary (the COMPILE_RECORD section), so a later check can tell a stale compiled model from a fresh one: the source
// model's content hash (its external data included), the session options that change the result, the Kiln version,
// the EPs' compilers and the target device. Together they are the compile identity: one key that two compiles share
// exactly when they write the same outputs (kiln compile reuses intact outputs of an unchanged identity).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/compile_outputs.h"
#include "kiln/status.h"
#include "onnx/model_source.h"

namespace kiln::epctx {

inline constexpr const char* kCompileRecordKey = "kiln.compile_record";

// What a compile targets beyond the model and options (session/compile_target.h fills it from the EPs).
struct CompileTarget {
  std::string toolchain;  // the EPs' compilers, e.g. "VulkanExecutionProvider: glslang 12.0.0 ..."; "" when none
  std::string device;     // "profile sha:<hash>", "device <name> <vendor>:<device> driver <version> ..." or ""
};

struct CompileRecord {
  std::string sourceHash;   // XXH3-64 hex of the model bytes, then of each external data file (sorted by path)
  std::string sourceModel;  // the source as the ctx model's folder reaches it (relative), or its file name
  std::map<std::string, std::string> options;  // the result-changing config keys, defaults filled in
  std::string kilnVersion;
  CompileTarget target;   // empty in records written before compile identities (Kiln 0.1 before 2026-12)
  std::string identity;   // compileIdentityOf(*this) when written; "" in older records
  // The compile wrote a weightless binary (options["ep.enable_weightless_ep_context_nodes"] is "1").
  bool weightless() const;
};

// The content hash of a source model: its serialized bytes, then the bytes of every external data file its
// initializers came from (`originals`, absolute paths). NO_SUCHFILE when such a file is gone.
Result<std::string> sourceContentHash(std::span<const std::byte> modelBytes,
                                      const std::map<std::string, ExternalInitializerInfo>& originals);
// The same for the model file at `path` (read to find its external data).
Result<std::string> sourceContentHash(const std::string& path);

// How a record stores kiln.vulkan.target_profile: "sha:" + the profile file's content hash ("sha:" alone when the
// file cannot be read), "" when no profile is set.
std::string recordedProfileValue(const std::string& profilePath);

// The record of compiling the source at `sourcePath` (empty: a model from memory) into a ctx model in `ctxFolder`
// with `options`, the result-changing config values (session/session_config.h: resultChangingOptions), for `target`.
Result<CompileRecord> compileRecordFor(std::span<const std::byte> sourceBytes, const std::string& sourcePath,
                                       const std::map<std::string, ExternalInitializerInfo>& originals,
                                       const std::map<std::string, std::string>& options, const std::string& ctxFolder,
                                       const CompileTarget& target);

// The compile identity of `record`: 16 hex digits of XXH3 over the source hash, the options, the Kiln version,
// the toolchain and the target device.
std::string compileIdentityOf(const CompileRecord& record);

std::string encodeCompileRecord(const CompileRecord& record);
// encodeCompileRecord(compileRecordFor(...)) for a source given by path or bytes (onnx/model_source.h); "" with a
// warning when the source cannot be hashed (the ctx model is then written without a record).
std::string encodedCompileRecordFor(const ModelSource& source, const std::map<std::string, ExternalInitializerInfo>& originals,
                                    const std::map<std::string, std::string>& options, const std::string& ctxFolder,
                                    const CompileTarget& target);
// nullopt when `text` is not a compile record this engine understands.
std::optional<CompileRecord> decodeCompileRecord(const std::string& text);

// Why a compiled model with `record` is stale, each reason beginning "stale: ": the source now hashes to
// `currentSourceHash` (when given), `currentOptions` (when given) differ, another Kiln compiled it, or (when
// `currentTarget` is given) another compiler or target device.
struct Staleness {
  bool sourceChanged = false;
  std::vector<std::string> reasons;  // source, options, version: in that order
};
Staleness stalenessOf(const CompileRecord& record, const std::optional<std::string>& currentSourceHash,
                      const std::optional<std::map<std::string, std::string>>& currentOptions,
                      const std::optional<CompileTarget>& currentTarget = std::nullopt);

}  // namespace kiln::epctx
