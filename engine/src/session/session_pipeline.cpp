#include "session/session_pipeline.h"

#include <algorithm>
#include <thread>

#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln {
namespace {

Status cancelled() { return Status(StatusCode::CANCELLED, "session creation cancelled"); }

}  // namespace

Result<int> threadCount(const SessionOptions& options) {
  const std::string value =
      options.configEntryOr("kiln.intra_op_num_threads", options.configEntryOr("session.intra_op_num_threads", "0"));
  try {
    size_t used = 0;
    const int n = std::stoi(value, &used);
    if (n < 0 || used != value.size()) throw std::invalid_argument("not a non-negative integer");
    // Default: one thread per logical core (at most 16), like ONNX Runtime's default; the CPU EP's pool runs small
    // work inline, so tiny models do not pay for the threads.
    return n == 0 ? static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)) : n;
  } catch (const std::exception&) {
    return Status(StatusCode::INVALID_ARGUMENT, "kiln.intra_op_num_threads must be a non-negative integer, got '" +
                                                    value + "'");
  }
}

Status checkSessionConfig(const SessionOptions& options) {
  KILN_RETURN_IF_ERROR(threadCount(options).status());
  return optimizer::parseOptimizationLevel(options.configEntryOr("kiln.graph_optimization_level", "basic")).status();
}

onnx_io::LoadOptions loadOptionsFrom(const SessionOptions& options) {
  onnx_io::LoadOptions load;
  load.externalDataFolder = options.configEntryOr("session.model_external_initializers_file_folder_path", "");
  return load;
}

Result<PreparedModel> prepareModel(ProviderSet providers, const ModelLoader& load, const SessionOptions& options) {
  const ProgressSink& progress = options.progress;
  PreparedModel prepared;
  prepared.providers = std::move(providers);
  KILN_ASSIGN_OR_RETURN(prepared.threads, threadCount(options));
  const std::string levelName = options.configEntryOr("kiln.graph_optimization_level", "basic");
  KILN_ASSIGN_OR_RETURN(const auto level, optimizer::parseOptimizationLevel(levelName));

  if (progress.cancelled()) return cancelled();
  progress.report("load", 0, 1);
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, load());
  prepared.model = std::move(loaded.model);
  prepared.timings.load_ms = loaded.loadMs;
  prepared.timings.shape_inference_ms = loaded.shapeInferenceMs;

  if (progress.cancelled()) return cancelled();
  progress.report("optimize", 0, 1);
  Stopwatch optimizeClock;
  KILN_ASSIGN_OR_RETURN(prepared.optimization, optimizer::optimizeModel(prepared.model, level));
  prepared.timings.optimize_ms = optimizeClock.elapsedMs();
  prepared.counters.optimizer_passes_run = prepared.optimization.passesRun;
  log::debug("optimizer ({}): {} Constant nodes and {} other nodes folded, {} dead nodes removed",
             optimizer::optimizationLevelName(level), prepared.optimization.foldedConstants.size(),
             prepared.optimization.nodesFolded, prepared.optimization.nodesRemoved);

  if (progress.cancelled()) return cancelled();
  progress.report("partition", 0, 1);
  Stopwatch partitionClock;
  std::vector<ExecutionProvider*> order;
  for (auto& ep : prepared.providers.providers) order.push_back(ep.get());
  PartitionOptions partitionOptions;
  partitionOptions.disableCpuFallback = prepared.providers.nonCpuRequested &&
                                        options.configEntryOr("session.disable_cpu_ep_fallback", "0") == "1";
  KILN_ASSIGN_OR_RETURN(prepared.plan, planPartitions(prepared.model, order, partitionOptions));
  prepared.timings.partition_ms = partitionClock.elapsedMs();
  progress.report("partition", 1, 1);
  return prepared;
}

}  // namespace kiln
