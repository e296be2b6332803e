// Internal entry points of session creation, for tests that bring their own execution providers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"

namespace kiln {

// Session::create for the model file at `path`, with `providers` (preference order) instead of the ones
// kiln.execution_providers names. session.disable_cpu_ep_fallback applies when any of them is not the CPU EP.
Result<std::unique_ptr<Session>> createSessionWithProviders(const std::string& path, const SessionOptions& options,
                                                            std::vector<std::unique_ptr<ExecutionProvider>> providers);

// analyzePartitions with `providers`, as above.
Result<PartitionReport> analyzePartitionsWithProviders(const std::string& path, const SessionOptions& options,
                                                       std::vector<std::unique_ptr<ExecutionProvider>> providers);

}  // namespace kiln
