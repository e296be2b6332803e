// CLI conventions (engine/ARCHITECTURE.md, Contracts): JSON only on stdout, logs and progress only on stderr,
// exit codes 0 ok / 1 failure / 2 usage / 3 incompatible binary.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/session_options.h"
#include "kiln/status.h"
#include "engine_json.h"
#include "session_flags.h"

namespace kiln::cli {

enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitIncompatible = 3 };

// Flags every subcommand shares.
struct CommonFlags {
  bool json = false;
  bool quiet = false;
  bool verbose = false;
};
void addCommonFlags(CLI::App& command, CommonFlags& flags);
// Routes engine logs to stderr at the level the flags ask for.
void configureLogging(const CommonFlags& flags);

// Prints `status` to stderr ("kiln: INVALID_GRAPH: ...") and returns the exit code for it.
int reportError(const Status& status, const CommonFlags& flags);
// The session flags every tool shares (app/common/session_flags.h).
using app::applyConfigEntries;
using app::applyExecutionProviders;
using app::splitAssignment;
// --shape NAME=1x3x640x640 arguments set as the session's input shapes (SessionOptions::setInputShape), which the
// session checks against the model; INVALID_ARGUMENT naming --shape and the entry for malformed text.
Status applyShapeArguments(const std::vector<std::string>& shapeArgs, SessionOptions& options);

// Prints a JSON document to stdout.
void printJson(const nlohmann::json& document);

// {"load_ms": ..., ...} and {"glslang_compiles": ..., ...} (app/common/engine_json.h).
using app::countersToJson;
using app::timingsToJson;
// "float32[1,3,640,640]" with symbolic dimensions by name.
std::string describeValue(const ValueMetadata& value);

}  // namespace kiln::cli
