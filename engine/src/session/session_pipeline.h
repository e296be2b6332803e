// The front half of session creation, shared by Session::create and analyzePartitions: execution providers
// (created before the model loads, so device creation overlaps loading), load, optimize, partition plan.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "ir/graph.h"
#include "kiln/timings.h"
#include "onnx/model_loader.h"
#include "optimizer/optimizer.h"
#include "partition/graph_partitioner.h"
#include "session/execution_providers.h"
#include "session/session_config.h"

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

// How the model loads under `config` (session.model_external_initializers_file_folder_path).
onnx_io::LoadOptions loadOptionsFrom(const SessionConfig& config);

// Loads the model with `load`, optimizes it at the configured level and plans its partitions over `providers`,
// reporting to `progress` and honouring its cancellation (CANCELLED) between the steps.
Result<PreparedModel> prepareModel(ProviderSet providers, const ModelLoader& load, const SessionConfig& config,
                                   const ProgressSink& progress);

}  // namespace kiln
