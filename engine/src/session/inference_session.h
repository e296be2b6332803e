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
#include "partition/partition_report_builder.h"
#include "util/stopwatch.h"

namespace kiln {

// Session::create for the model file at `path`, with `providers` (preference order) instead of the ones
// kiln.execution_providers names. session.disable_cpu_ep_fallback applies when any of them is not the CPU EP.
Result<std::unique_ptr<Session>> createSessionWithProviders(const std::string& path, const SessionOptions& options,
                                                            std::vector<std::unique_ptr<ExecutionProvider>> providers);

// A compiled model: the top-level model rewritten so that each compiled partition is one fused KilnPartition node
// (its `partition` attribute indexes `partitions`), and the partitions as plain data. An EPContext model and its
// context binary are the serialized form of this (issue 5 maps EPContext nodes onto fused nodes).
struct CompiledModel {
  ir::Model model;
  std::vector<CompiledPartition> partitions;
  std::vector<std::shared_ptr<const void>> resources;  // what the partitions' storage lives in (shared binaries)
  std::vector<StoredPartitionOrigin> origins;  // parallel to partitions when loaded from EPContext nodes, else empty
};

// Where a model comes from: a file, or bytes in memory (path empty).
struct ModelSource {
  std::string path;
  std::span<const std::byte> bytes;
};

struct CompilingSession {
  std::unique_ptr<Session> session;
  std::map<std::string, ExternalInitializerInfo> originals;  // the source's external-data locations, by initializer
};

// Session creation for a model that is to be compiled now (the Compile API): INVALID_GRAPH when it holds EPContext
// nodes already; ep.context_* generation options are not acted on.
Result<CompilingSession> createCompilingSession(const ModelSource& source, const SessionOptions& options);

// The compiled model behind a session this engine created (INVALID_ARGUMENT for another Session implementation).
Result<CompiledModel> compiledModelOf(const Session& session);

// The session for a compiled model whose partitions are loaded, not compiled: no optimizer pass, no placement, no
// prepack, no glslang. `timings` carries what the caller measured already (binary_read_ms, binary_validate_ms);
// session_total_ms counts from `started` when given (the caller's first step).
Result<std::unique_ptr<Session>> createSessionFromCompiledModel(CompiledModel compiled, const SessionOptions& options,
                                                                const SessionTimings& timings = {},
                                                                const Stopwatch* started = nullptr);

// analyzePartitions with `providers`, as above.
Result<PartitionReport> analyzePartitionsWithProviders(const std::string& path, const SessionOptions& options,
                                                       std::vector<std::unique_ptr<ExecutionProvider>> providers);

}  // namespace kiln
