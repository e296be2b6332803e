// kiln bench --compare BASE.json NEW.json: reads two saved results and prints app/common/bench_compare.h's verdicts.
#pragma once

#include <string>

#include "cli_output.h"

namespace kiln::cli {

struct BenchCompareArgs {
  double thresholdPct = 5;
  double failAbovePct = -1;  // < 0: no --fail-above
};

// Exit 0, or 1 when a phase is significantly slower than --fail-above allows, or 2 when a file cannot be read, is
// not a bench result, or measures another model (the message says which).
int runBenchCompare(const std::string& basePath, const std::string& newPath, const BenchCompareArgs& args,
                    const CommonFlags& flags);

}  // namespace kiln::cli
