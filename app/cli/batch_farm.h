// The compile farm of `kiln batch`: a generator for jobs files that compile every model for every device
// profile (cross-compile), check each binary against its profile and benchmark each model on the local
// device, and the model x profile summary printed after such a batch (verdict, binary size, compile time).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch_jobs.h"
#include "batch_run.h"
#include "kiln/status.h"

namespace kiln::cli {

// {"jobs": [...]} for every *.onnx in modelsDir and every device profile (*.json with "kiln_device_profile")
// in profilesDir: compile-<model>@<profile> (-o farm/<model>@<profile>/<model>_ctx.onnx --target-profile),
// check-<model>@<profile> after it, and bench-<model> (--runs benchRuns, the local device). Paths are
// relative to jobsFolder, the folder the jobs file will be in. INVALID_ARGUMENT when a folder is missing or
// holds none.
Result<nlohmann::json> farmJobs(const std::string& modelsDir, const std::string& profilesDir,
                                const std::string& jobsFolder, int benchRuns);

// The model x profile table of a farm batch on stdout (nothing when the batch has no
// compile-<model>@<profile> job).
void printFarmTable(const std::vector<app::BatchJob>& jobs, const std::vector<JobOutcome>& outcomes);

}  // namespace kiln::cli
