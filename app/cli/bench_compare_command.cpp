// kiln bench --compare (bench_compare_command.h).
#include "bench_compare_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench_compare.h"

namespace kiln::cli {
namespace {

// The parsed JSON of a saved result; INVALID_ARGUMENT (exit 2) for a missing, unreadable or malformed file.
Result<nlohmann::json> readResult(const std::string& path, const char* which) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(which) + " '" + path + "' is not a file");
  }
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file && !file.eof()) return Status(StatusCode::INVALID_ARGUMENT, std::string("cannot read ") + which + " '" + path + "'");
  nlohmann::json document = nlohmann::json::parse(text.str(), nullptr, false);
  if (document.is_discarded()) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(which) + " '" + path + "' is not JSON");
  }
  return document;
}

}  // namespace

int runBenchCompare(const std::string& basePath, const std::string& newPath, const BenchCompareArgs& args,
                    const CommonFlags& flags) {
  auto base = readResult(basePath, "BASE");
  if (!base.isOk()) return reportError(base.status(), flags);
  auto next = readResult(newPath, "NEW");
  if (!next.isOk()) return reportError(next.status(), flags);
  app::BenchCompareOptions options;
  options.thresholdPct = args.thresholdPct;
  if (args.failAbovePct >= 0) options.failAbovePct = args.failAbovePct;
  auto comparison = app::compareBenchResults(*base, *next, options);
  if (!comparison.isOk()) {
    return reportError(Status(comparison.status().code(), basePath + " vs " + newPath + ": " +
                                                              comparison.status().message()),
                       flags);
  }
  comparison->basePath = basePath;
  comparison->newPath = newPath;
  if (flags.json) {
    printJson(app::toJson(*comparison));
  } else {
    std::fputs(app::toTable(*comparison).c_str(), stdout);
  }
  return comparison->failed() ? kExitFailure : kExitOk;
}

}  // namespace kiln::cli
