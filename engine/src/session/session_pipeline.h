// The front half of session creation, shared by Session::create and analyzePartitions: execution providers
// (created before the model loads, so device creation overlaps loading), load, optimize, partition plan.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "ir/graph.h"
#include "kiln/session_options.h"
#include "kiln/timings.h"
#include "onnx/model_loader.h"
#include "optimizer/optimizer.h"
#include "partition/graph_partitioner.h"
#include "session/execution_providers.h"

namespace kiln {

struct PreparedModel {
  ProviderSet providers;
  ir::Model model;  // optimized; the plan points into its graphs
  optimizer::OptimizationResult optimization;
  PartitionPlan plan;  // planned, not applied
  SessionTimings timings;
  WorkCounters counters;
  int threads = 1;
  // Where the source's external initializers lie: the ones a compile deferred are read from here when needed.
  std::map<std::string, ExternalInitializerInfo> externalRanges;
};

using ModelLoader = std::function<Result<onnx_io::LoadedModel>()>;

// Parses the session's config entries (parseSessionConfig) so a bad value fails before any work: INVALID_ARGUMENT
// naming the key.
Status checkSessionConfig(const SessionOptions& options);
// kiln.intra_op_num_threads (or session.intra_op_num_threads); 0 or unset = the default (1).
Result<int> threadCount(const SessionOptions& options);
onnx_io::LoadOptions loadOptionsFrom(const SessionOptions& options);

// Loads the model with `load`, optimizes it at kiln.graph_optimization_level and plans its partitions over
// `providers`, reporting progress and honouring cancellation (CANCELLED) between the steps.
Result<PreparedModel> prepareModel(ProviderSet providers, const ModelLoader& load, const SessionOptions& options);

}  // namespace kiln
