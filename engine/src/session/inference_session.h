// Internal entry points of session creation, for tests that bring their own execution providers.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "kiln/compiler.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "onnx/model_source.h"
#include "partition/compiled_model.h"
#include "util/stopwatch.h"

namespace kiln {

struct SessionConfig;  // session/session_config.h

// Session::create for the model file at `path`, with `providers` (preference order) instead of the ones
// kiln.execution_providers names. session.disable_cpu_ep_fallback applies when any of them is not the CPU EP.
Result<std::unique_ptr<Session>> createSessionWithProviders(const std::string& path, const SessionOptions& options,
                                                            std::vector<std::unique_ptr<ExecutionProvider>> providers);

struct CompilingSession {
  std::unique_ptr<Session> session;
  std::map<std::string, ExternalInitializerInfo> originals;  // the source's external-data locations, by initializer
};

// Session creation for a model that is to be compiled now (the Compile API): INVALID_GRAPH when it holds EPContext
// nodes already; ep.context_* generation options are not acted on. With `deferWeights`, large external weights the
// compile passes through untouched stay in their file (deferred_weights.h): the session cannot run, and its binary
// must be written with CompilingSession::originals as the external weights' ranges.
Result<CompilingSession> createCompilingSession(const ModelSource& source, const SessionOptions& options,
                                                bool deferWeights = false);

// The compiled model behind a session this engine created (INVALID_ARGUMENT for another Session implementation).
Result<CompiledModel> compiledModelOf(const Session& session);

// The session for a compiled model whose partitions are loaded, not compiled: no optimizer pass, no placement, no
// prepack, no glslang. `timings` carries what the caller measured already (binary_read_ms, binary_validate_ms);
// session_total_ms counts from `started` when given (the caller's first step). `config` is `options` parsed.
Result<std::unique_ptr<Session>> createSessionFromCompiledModel(CompiledModel compiled, const SessionOptions& options,
                                                                const SessionConfig& config,
                                                                const SessionTimings& timings = {},
                                                                const Stopwatch* started = nullptr);

// analyzePartitions with `providers`, as above.
Result<PartitionReport> analyzePartitionsWithProviders(const std::string& path, const SessionOptions& options,
                                                       std::vector<std::unique_ptr<ExecutionProvider>> providers);

}  // namespace kiln
