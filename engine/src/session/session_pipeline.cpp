#include "session/session_pipeline.h"

#include "ep/cpu/host_evaluator.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln {
namespace {

Status cancelled() { return Status(StatusCode::CANCELLED, "session creation cancelled"); }

}  // namespace

onnx_io::LoadOptions loadOptionsFrom(const SessionConfig& config) {
  onnx_io::LoadOptions load;
  load.externalDataFolder = config.externalInitializersFolder;
  return load;
}

Result<PreparedModel> prepareModel(ProviderSet providers, const ModelLoader& load, const SessionConfig& config,
                                   const ProgressSink& progress) {
  PreparedModel prepared;
  prepared.providers = std::move(providers);
  prepared.threads = config.intraOpThreads;
  const optimizer::OptimizationLevel level = config.optimizationLevel;

  if (progress.cancelled()) return cancelled();
  progress.report(ProgressStep::LOAD, 0, 1);
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, load());
  prepared.model = std::move(loaded.model);
  prepared.externalRanges = std::move(loaded.externalInitializers);
  prepared.timings.load_ms = loaded.loadMs;
  prepared.timings.shape_inference_ms = loaded.shapeInferenceMs;

  if (progress.cancelled()) return cancelled();
  progress.report(ProgressStep::OPTIMIZE, 0, 1);
  Stopwatch optimizeClock;
  KILN_ASSIGN_OR_RETURN(prepared.optimization, optimizer::optimizeModel(prepared.model, level, *cpu::hostEvaluator()));
  prepared.timings.optimize_ms = optimizeClock.elapsedMs();
  prepared.counters.optimizer_passes_run = prepared.optimization.passesRun;
  log::debug("optimizer ({}): {} Constant nodes and {} other nodes folded, {} dead nodes removed, "
             "{} QDQ pairs dropped",
             optimizer::optimizationLevelName(level), prepared.optimization.foldedConstants.size(),
             prepared.optimization.nodesFolded, prepared.optimization.nodesRemoved,
             prepared.optimization.qdqPairsDropped);

  if (progress.cancelled()) return cancelled();
  progress.report(ProgressStep::PARTITION, 0, 1);
  Stopwatch partitionClock;
  std::vector<ExecutionProvider*> order;
  for (auto& ep : prepared.providers.providers) order.push_back(ep.get());
  PartitionOptions partitionOptions;
  partitionOptions.disableCpuFallback = prepared.providers.nonCpuRequested && config.disableCpuEpFallback;
  KILN_ASSIGN_OR_RETURN(prepared.plan, planPartitions(prepared.model, order, partitionOptions));
  prepared.timings.partition_ms = partitionClock.elapsedMs();
  progress.report(ProgressStep::PARTITION, 1, 1);
  return prepared;
}

}  // namespace kiln
