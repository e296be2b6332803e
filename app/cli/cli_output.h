// CLI conventions (architecture.md, Contracts): JSON only on stdout, logs and progress only on stderr,
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
// Adds each "KEY=VALUE" of --config to `options`; INVALID_ARGUMENT for a malformed entry or an unknown kiln.* key.
Status applyConfigEntries(const std::vector<std::string>& entries, SessionOptions& options);

// "NAME=VALUE" split at the first '='; INVALID_ARGUMENT naming the option `what` otherwise.
Result<std::pair<std::string, std::string>> splitAssignment(const std::string& text, const char* what);
// "1x3x640x640".
Result<Shape> parseShape(const std::string& text);
// --shape NAME=1x3x640x640 arguments: the symbolic dimensions of input NAME become kiln.free_dim_override.<param>
// entries (Contracts: Shapes). Returns the shapes by input name.
Result<std::map<std::string, Shape>> applyShapeArguments(const std::string& model, const std::vector<std::string>& shapeArgs,
                                                         SessionOptions& options);

// Prints a JSON document to stdout.
void printJson(const nlohmann::json& document);

// {"load_ms": ..., ...} and {"glslang_compiles": ..., ...} with the Contracts' key names.
nlohmann::json timingsToJson(const SessionTimings& timings);
nlohmann::json countersToJson(const WorkCounters& counters);
// "float32[1,3,640,640]" with symbolic dimensions by name.
std::string describeValue(const ValueMetadata& value);

}  // namespace kiln::cli
