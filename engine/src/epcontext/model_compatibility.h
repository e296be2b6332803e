// The judgement behind kiln/compatibility.h's getModelCompatibility: a ctx model, a context binary or a plain model
// against a device or profile, plus the compile record's staleness. The session layer reduces the query's compile
// options to their result-changing values first (session/session_config.h), so nothing here reads a config key.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "context_binary/ep_context_hooks.h"
#include "kiln/compatibility.h"

namespace kiln::epctx {

// The model in `bytes` (`origin` names it in reasons; relative binary paths resolve against `baseFolder`) judged
// against `query`'s target (the live device or a profile) by the EP that wrote it, whose hooks `providers` finds
// (by its EPContext nodes' source, or a bare binary's partitions; a binary of another format major version is
// said against the EP that claims source-less nodes). `currentOptions`: the result-changing options one would
// compile with now (none: not compared).
// The verdict on a context binary of another format major version (read from its first bytes, before anything else
// is trusted): `unsupported`, said against `query`'s device of the EP that claims source-less EPContext nodes;
// nullopt when this engine reads the version. INVALID_GRAPH when the bytes are no context binary.
Result<std::optional<CompatibilityVerdict>> judgeOtherFormat(std::span<const std::byte> bytes, const std::string& origin,
                                                             const CompatibilityQuery& query,
                                                             const ctxbin::ContextHooksLookup& providers);
// An open binary judged by the EP whose partitions it holds (`providers` finds it; NOT_IMPLEMENTED when none) against
// `query`'s target (that EP's live device, or a profile).
Result<CompatibilityVerdict> judgeContextBinary(const ctxbin::ContextBinary& binary, const CompatibilityQuery& query,
                                                const ctxbin::ContextHooksLookup& providers);

Result<ModelCompatibility> judgeModel(std::span<const std::byte> bytes, const std::string& baseFolder,
                                      const std::string& origin, const CompatibilityQuery& query,
                                      const std::optional<std::map<std::string, std::string>>& currentOptions,
                                      const ctxbin::ContextHooksLookup& providers);

}  // namespace kiln::epctx
