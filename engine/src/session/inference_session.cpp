// InferenceSession: providers → load → optimize → partition → compile + load partitions → one CPU executor over
// the rewritten top-level graph, in which each compiled partition is one fused node → run.
#include "session/inference_session.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <mutex>

#include "ep/cpu/cpu_execution_provider.h"
#include "ep/cpu/graph_executor.h"
#include "epcontext/compile_record.h"
#include "epcontext/ctx_model_loader.h"
#include "partition/partition_report_builder.h"
#include "session/compile_target.h"
#include "session/deferred_weights.h"
#include "session/epcontext_generation.h"
#include "onnx/input_shapes.h"
#include "session/execution_providers.h"
#include "session/package_session.h"
#include "session/partition_kernel.h"
#include "session/session_config.h"
#include "session/session_pipeline.h"
#include "util/log.h"
#include "kiln/config_keys.h"
#include "kiln/model_package.h"
#include "kiln/provider_names.h"
#include "kiln/tensor_size.h"
#include "session/config_value.h"
#include "util/guarded.h"
#include "util/stopwatch.h"

namespace kiln {
namespace {

struct LoadedPartition {
  CompiledPartition compiled;  // as compiled or as read from a context binary
  std::unique_ptr<PartitionExecutable> executable;
};

class InferenceSession final : public Session {
 public:
  const std::vector<ValueMetadata>& inputs() const override { return inputs_; }
  const std::vector<ValueMetadata>& outputs() const override { return outputs_; }
  const SessionTimings& timings() const override { return timings_; }
  const WorkCounters& counters() const override { return counters_; }
  const std::vector<PartitionSummary>& partitions() const override { return summaries_; }
  const PartitionReport& partitionReport() const override { return report_; }
  RunProfile lastRunProfile() const override {
    std::lock_guard<std::mutex> lock(profileMutex_);
    return lastProfile_;
  }
  using Session::run;
  using Session::runValues;
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs, const RunOptions& options) override {
    return guarded([&] { return runTensors(inputs, options); });
  }
  Result<std::vector<NamedValue>> runValues(const std::vector<NamedValue>& inputs, const RunOptions& options) override {
    return guarded([&] { return runUnguarded(inputs, options, {}); });
  }
  Status runWithBinding(IoBinding& binding, const RunOptions& options) override {
    return guarded([&]() -> Result<bool> {
      KILN_RETURN_IF_ERROR(runBound(binding, options));
      return true;
    }).status();
  }
  TransferCounters transfers() const override;

  // `compileOnly`: the session exists to be compiled into a ctx model (the Compile API): partitions are loaded only
  // where the EP's export needs it, and no executor is created (no first-run preparation); run() refuses.
  // `config` is `options` parsed (the session's one parse); `options` supplies the progress sink and the tensor limit.
  Status initialize(PreparedModel prepared, const SessionOptions& options, const SessionConfig& config,
                    const Stopwatch& clock, bool compileOnly);
  // A session over an already compiled model: `model` is rewritten (partitions as fused nodes) and `partitions`
  // are loaded by their EPs from stored data; nothing is optimized, placed, prepacked or compiled.
  Status initializeCompiled(ProviderSet providers, CompiledModel compiled, const SessionOptions& options,
                            const SessionConfig& config, const SessionTimings& timings, const Stopwatch& clock);
  CompiledModel compiledModel() const;

 private:
  Status finishInitialization(const SessionConfig& config, int threads,
                              const Stopwatch& clock);
  Status compilePartitions(PartitionPlan& plan, int threads, bool compileOnly);
  Result<std::unique_ptr<cpu::Kernel>> fusedKernel(const cpu::KernelInfo& info);
  Status checkInput(const ValueMetadata& meta, const Value& value) const;
  Result<std::vector<NamedTensor>> runTensors(const std::vector<NamedTensor>& inputs, const RunOptions& options);
  // `deviceOutputs`: the outputs this run leaves where their partitions computed them (IoBinding's DEVICE place);
  // every other device tensor among the results is read back to host memory.
  Result<std::vector<NamedValue>> runUnguarded(const std::vector<NamedValue>& inputs, const RunOptions& options,
                                               const std::vector<std::string>& deviceOutputs);
  Status runBound(IoBinding& binding, const RunOptions& options);
  Result<std::vector<size_t>> selectOutputs(const RunOptions& options) const;
  RunProfile makeRunProfile(std::vector<cpu::NodeProfiler::Entry> entries, double runMs) const;

  // Declaration order is destruction order reversed: the executor (whose kernels call the partitions) goes first,
  // then the partitions, then the EPs (and their devices).
  ProviderSet providers_;
  std::vector<std::shared_ptr<const void>> resources_;  // shared context binaries the partitions' weights live in
  ir::Model model_;
  std::vector<LoadedPartition> partitions_;  // index = the fused node's `partition` attribute
  std::unique_ptr<cpu::GraphExecutor> executor_;
  // The executor keeps one frame of values (and EPs may keep per-partition state), so concurrent run() calls take
  // turns: one mutex around the whole run. Simple and safe; sessions that need parallel runs can be duplicated.
  std::mutex runMutex_;
  std::vector<std::string> deviceOutputs_;  // the running run's deviceOutputs (under runMutex_), read by partitions
  std::atomic<uint64_t> outputReadBytes_{0};  // device outputs read back to host memory by runs
  std::vector<ValueMetadata> inputs_, outputs_;
  std::vector<PartitionSummary> summaries_;
  PartitionReport report_;
  SessionTimings timings_;
  WorkCounters counters_;
  // What the executor and the loaded partitions check between nodes. During creation: SessionOptions::progress.
  // Once created: no callback, and during a run the running RunOptions' token (set under runMutex_), so a token
  // cancelled during or after creation never cancels a run.
  ProgressSink progress_;
  bool firstRunDone_ = false;
  cpu::NodeProfiler profiler_;  // used under runMutex_; active only during a run whose RunOptions ask for it
  mutable std::mutex profileMutex_;
  RunProfile lastProfile_;
};

// Session::partitions(): one line per partition of `report`, in its order.
void summarize(const PartitionReport& report, std::vector<PartitionSummary>& summaries) {
  for (const auto& graph : report.graphs) {
    for (const auto& p : graph.partitions) {
      summaries.push_back({p.name, p.executionProvider, static_cast<int64_t>(p.nodes.size())});
    }
  }
}

// A fixed input shape no tensor could ever fill (over kiln.max_tensor_bytes) is refused at creation: INVALID_GRAPH.
Status checkDeclaredSize(uint64_t limit, const ValueMetadata& input) {
  Shape shape;
  for (const auto& dim : input.shape) {
    if (!dim.isFixed()) return Status::ok();
    shape.push_back(dim.value);
  }
  auto bytes = checkedTensorBytes(input.dtype, shape, limit, "input '" + input.name + "'");
  if (!bytes.isOk()) return Status(StatusCode::INVALID_GRAPH, bytes.status().message());
  return Status::ok();
}

Status InferenceSession::compilePartitions(PartitionPlan& plan, int threads, bool compileOnly) {
  const CompileContext context{model_, &progress_, threads, &timings_, &counters_};
  const auto total = static_cast<int64_t>(plan.partitions.size());
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    if (progress_.cancelled()) return Status(StatusCode::CANCELLED, "session creation cancelled");
    progress_.report(ProgressStep::COMPILE, static_cast<int64_t>(i), total);
    const PlannedPartition& planned = plan.partitions[i];
    ExecutionProvider* ep = providers_.providers[planned.provider].get();
    const std::string where = "partition '" + planned.spec.name + "' (" + planned.graphPath + ")";
    auto compiled = ep->compile(*planned.graph, planned.spec, context);
    if (!compiled.isOk()) return compiled.status().withContext("compiling " + where);
    if (compileOnly && !ep->exportNeedsLoad()) {
      partitions_.push_back({std::move(compiled).value(), nullptr});
      continue;
    }
    auto executable = ep->load(*compiled, context);
    if (!executable.isOk()) return executable.status().withContext("loading " + where);
    partitions_.push_back({std::move(compiled).value(), std::move(executable).value()});
  }
  progress_.report(ProgressStep::COMPILE, total, total);
  return Status::ok();
}

Result<std::unique_ptr<cpu::Kernel>> InferenceSession::fusedKernel(const cpu::KernelInfo& info) {
  if (info.node.opType != kFusedPartitionOpType || info.node.domain != kFusedPartitionDomain) {
    return std::unique_ptr<cpu::Kernel>();  // not ours: the CPU registry's
  }
  const int64_t index = info.node.attrInt(kFusedPartitionAttribute, -1);
  if (index < 0 || static_cast<size_t>(index) >= partitions_.size()) {
    return Status(StatusCode::INVALID_GRAPH, "fused node " + info.node.label() + " names no compiled partition");
  }
  LoadedPartition& partition = partitions_[static_cast<size_t>(index)];
  return makePartitionKernel(info.node, partition.compiled, *partition.executable, &deviceOutputs_);
}

Status InferenceSession::initialize(PreparedModel prepared, const SessionOptions& options, const SessionConfig& config,
                                    const Stopwatch& clock, bool compileOnly) {
  progress_ = options.progress;
  providers_ = std::move(prepared.providers);
  model_ = std::move(prepared.model);
  timings_ = prepared.timings;
  counters_ = prepared.counters;

  // Compile against the graphs as planned, then rewrite them around the compiled partitions.
  KILN_RETURN_IF_ERROR(compilePartitions(prepared.plan, prepared.threads, compileOnly));
  KILN_RETURN_IF_ERROR(applyPartitionPlan(prepared.plan));
  if (!prepared.externalRanges.empty()) {
    KILN_RETURN_IF_ERROR(loadDeferredWeightsOutsidePartitions(*model_.graph, prepared.externalRanges));
  }
  report_ = makePartitionReport(prepared.plan, prepared.optimization);
  summarize(report_, summaries_);
  if (compileOnly) {
    for (auto& ep : providers_.providers) KILN_RETURN_IF_ERROR(ep->onSessionInitializationEnd());
    timings_.session_total_ms = clock.elapsedMs();
    progress_ = ProgressSink();
    return Status::ok();
  }
  return finishInitialization(config, prepared.threads, clock);
}

Status InferenceSession::initializeCompiled(ProviderSet providers, CompiledModel compiled, const SessionOptions& options,
                                            const SessionConfig& config, const SessionTimings& timings,
                                            const Stopwatch& clock) {
  progress_ = options.progress;
  providers_ = std::move(providers);
  resources_ = std::move(compiled.resources);
  model_ = std::move(compiled.model);
  timings_ = timings;
  const int threads = config.intraOpThreads;
  std::vector<std::string> providerNames;
  for (const auto& provider : providers_.providers) providerNames.push_back(provider->name());
  report_ = makeStoredModelReport(*model_.graph, compiled.partitions, compiled.origins, providerNames,
                                  providers_.providers.back()->name());
  summarize(report_, summaries_);
  const CompileContext context{model_, &progress_, threads, &timings_, &counters_};
  for (const auto& provider : providers_.providers) {
    std::vector<const CompiledPartition*> own;
    for (const auto& partition : compiled.partitions) {
      if (partition.executionProvider == provider->name()) own.push_back(&partition);
    }
    if (!own.empty()) KILN_RETURN_IF_ERROR(provider->prepareLoad(own, context));
  }
  const auto total = static_cast<int64_t>(compiled.partitions.size());
  for (size_t i = 0; i < compiled.partitions.size(); ++i) {
    if (progress_.cancelled()) return Status(StatusCode::CANCELLED, "session creation cancelled");
    progress_.report(ProgressStep::LOAD, static_cast<int64_t>(i), total);
    CompiledPartition& partition = compiled.partitions[i];
    ExecutionProvider* ep = nullptr;
    for (const auto& candidate : providers_.providers) {
      if (candidate->name() == partition.executionProvider) ep = candidate.get();
    }
    if (!ep) {
      return Status(StatusCode::INVALID_GRAPH, "partition '" + partition.name + "' was compiled for " +
                                                   partition.executionProvider + ", which this session does not have");
    }
    auto executable = ep->load(partition, context);
    if (!executable.isOk()) return executable.status().withContext("loading stored partition '" + partition.name + "'");
    partitions_.push_back({std::move(partition), std::move(executable).value()});
  }
  progress_.report(ProgressStep::LOAD, total, total);
  return finishInitialization(config, threads, clock);
}

CompiledModel InferenceSession::compiledModel() const {
  CompiledModel compiled;
  compiled.model = model_;
  for (const auto& partition : partitions_) compiled.partitions.push_back(partition.compiled);
  return compiled;
}

Status InferenceSession::finishInitialization(const SessionConfig& parsed, int threads,
                                              const Stopwatch& clock) {
  cpu::ExecutorConfig config;
  config.opsets = model_.opsetImports;
  config.intraOpThreads = threads;
  config.floatOnOneDnn = parsed.cpuFloatOnOneDnn;
  config.prepareFirstRun = true;
  config.maxTensorBytes = parsed.maxTensorBytes;
  config.progress = &progress_;
  config.profiler = &profiler_;
  config.externalKernel = [this](const cpu::KernelInfo& info) { return fusedKernel(info); };
  // Inputs no tensor could fill are refused before the executor plans memory for them.
  const ir::Graph& graph = *model_.graph;
  KILN_ASSIGN_OR_RETURN(inputs_, resolveInputShapes(graph, parsed.inputShapes));
  for (const auto& input : inputs_) KILN_RETURN_IF_ERROR(checkDeclaredSize(parsed.maxTensorBytes, input));
  Stopwatch kernelClock;
  KILN_ASSIGN_OR_RETURN(executor_, cpu::GraphExecutor::create(model_.graph, config));
  timings_.kernel_select_ms += kernelClock.elapsedMs();

  for (const auto& out : graph.outputs) outputs_.push_back(ir::toValueMetadata(out));
  for (auto& ep : providers_.providers) KILN_RETURN_IF_ERROR(ep->onSessionInitializationEnd());
  timings_.session_total_ms = clock.elapsedMs();
  progress_ = ProgressSink();  // creation is over: runs check only their own RunOptions' token
  return Status::ok();
}

Status InferenceSession::checkInput(const ValueMetadata& meta, const Value& value) const {
  const bool knownKind = meta.kind == ValueKind::TENSOR || meta.kind == ValueKind::SEQUENCE ||
                         meta.kind == ValueKind::OPTIONAL;
  if (knownKind && value.defined() && value.kind() != meta.kind) {
    return Status(StatusCode::INVALID_ARGUMENT, "input '" + meta.name + "' expects a value of kind " +
                                                    valueKindName(meta.kind) + ", got " + valueKindName(value.kind()));
  }
  if (!value.isTensor()) return Status::ok();  // element types and shapes of sequences are the kernels' to check
  const Tensor& tensor = value.tensor();
  if (meta.dtype != DataType::UNDEFINED && tensor.dtype() != meta.dtype) {
    return Status(StatusCode::INVALID_ARGUMENT, "input '" + meta.name + "' expects " + dataTypeName(meta.dtype) +
                                                    ", got " + dataTypeName(tensor.dtype()));
  }
  if (!meta.hasShape) return Status::ok();
  bool matches = meta.shape.size() == tensor.rank();
  for (size_t i = 0; matches && i < meta.shape.size(); ++i) {
    matches = !meta.shape[i].isFixed() || meta.shape[i].value == tensor.dim(i);
  }
  if (!matches) {
    std::string expected;
    for (size_t i = 0; i < meta.shape.size(); ++i) {
      expected += (i ? "x" : "") + (meta.shape[i].isFixed() ? std::to_string(meta.shape[i].value)
                                                            : (meta.shape[i].param.empty() ? "?" : meta.shape[i].param));
    }
    return Status(StatusCode::INVALID_ARGUMENT, "input '" + meta.name + "' expects shape " +
                                                    (expected.empty() ? "scalar" : expected) + ", got " +
                                                    shapeToString(tensor.shape()));
  }
  return Status::ok();
}

// The results as tensors; INVALID_ARGUMENT naming the first output that is a sequence or optional (`hint` says
// what to do instead).
Result<std::vector<NamedTensor>> tensorsOnly(std::vector<NamedValue> results, const std::string& hint) {
  std::vector<NamedTensor> outputs;
  outputs.reserve(results.size());
  for (auto& result : results) {
    if (!result.value.isTensor()) {
      return Status(StatusCode::INVALID_ARGUMENT, "output '" + result.name + "' is a " +
                                                      valueKindName(result.value.kind()) + ", not a tensor: " + hint);
    }
    outputs.push_back({std::move(result.name), result.value.tensor()});
  }
  return outputs;
}

Result<std::vector<NamedTensor>> InferenceSession::runTensors(const std::vector<NamedTensor>& inputs,
                                                              const RunOptions& options) {
  std::vector<NamedValue> values;
  values.reserve(inputs.size());
  for (const auto& input : inputs) values.push_back({input.name, input.tensor});
  KILN_ASSIGN_OR_RETURN(std::vector<NamedValue> results, runUnguarded(values, options, {}));
  return tensorsOnly(std::move(results), "use Session::runValues for this model");
}

// The graph-output positions a run returns: options.outputNames() in order, or every output.
Result<std::vector<size_t>> InferenceSession::selectOutputs(const RunOptions& options) const {
  const auto& outputs = model_.graph->outputs;
  std::vector<size_t> positions;
  if (options.outputNames().empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) positions.push_back(i);
    return positions;
  }
  for (const auto& name : options.outputNames()) {
    auto it = std::find_if(outputs.begin(), outputs.end(), [&](const ir::ValueInfo& v) { return v.name == name; });
    if (it == outputs.end()) {
      return Status(StatusCode::INVALID_ARGUMENT, "RunOptions names output '" + name + "', which the model does not have");
    }
    positions.push_back(static_cast<size_t>(it - outputs.begin()));
  }
  return positions;
}

TransferCounters InferenceSession::transfers() const {
  TransferCounters total;
  for (const auto& partition : partitions_) {
    if (!partition.executable) continue;
    const TransferCounters own = partition.executable->transfers();
    total.hostToDeviceBytes += own.hostToDeviceBytes;
    total.deviceToHostBytes += own.deviceToHostBytes;
  }
  total.deviceToHostBytes += outputReadBytes_.load() + (executor_ ? executor_->deviceBytesRead() : 0);
  return total;
}

Status InferenceSession::runBound(IoBinding& binding, const RunOptions& options) {
  std::vector<NamedValue> inputs;
  inputs.reserve(binding.inputs().size());
  for (const auto& input : binding.inputs()) inputs.push_back({input.name, input.tensor});
  RunOptions bound = options;
  std::vector<std::string> names, deviceOutputs;
  const auto& graphOutputs = model_.graph->outputs;
  for (const auto& bound : binding.boundOutputs()) {
    const std::string& name = bound.first;
    const OutputPlace place = bound.second;
    if (std::none_of(graphOutputs.begin(), graphOutputs.end(), [&](const ir::ValueInfo& v) { return v.name == name; })) {
      return Status(StatusCode::INVALID_ARGUMENT, "the IoBinding binds output '" + name + "', which the model does not have");
    }
    names.push_back(name);
    if (place == OutputPlace::DEVICE) deviceOutputs.push_back(name);
  }
  bound.setOutputNames(names);
  KILN_ASSIGN_OR_RETURN(std::vector<NamedValue> results, runUnguarded(inputs, bound, deviceOutputs));
  KILN_ASSIGN_OR_RETURN(std::vector<NamedTensor> outputs, tensorsOnly(std::move(results), "IoBinding binds tensors only"));
  binding.setOutputs(std::move(outputs));
  return Status::ok();
}

Result<std::vector<NamedValue>> InferenceSession::runUnguarded(const std::vector<NamedValue>& inputs,
                                                                const RunOptions& options,
                                                                const std::vector<std::string>& deviceOutputs) {
  const ir::Graph& graph = *model_.graph;
  // Requested outputs first: a wrong name costs no inference. The executor runs every node (its plan is fixed at
  // creation); outputs not asked for are dropped.
  KILN_ASSIGN_OR_RETURN(const std::vector<size_t> selected, selectOutputs(options));
  // Graph inputs in declaration order; an initializer listed as an input may be fed, else it keeps its value.
  std::vector<Value> bound(graph.inputs.size());
  for (const auto& input : inputs) {
    auto position = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                                 [&](const ir::ValueInfo& v) { return v.name == input.name; });
    if (position == graph.inputs.end()) {
      return Status(StatusCode::INVALID_ARGUMENT, "the model has no input named '" + input.name + "'");
    }
    auto meta = std::find_if(inputs_.begin(), inputs_.end(),
                             [&](const ValueMetadata& m) { return m.name == input.name; });
    if (meta != inputs_.end()) KILN_RETURN_IF_ERROR(checkInput(*meta, input.value));
    bound[static_cast<size_t>(position - graph.inputs.begin())] = input.value;
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (!bound[i].defined() && !graph.isInitializer(graph.inputs[i].name)) {
      return Status(StatusCode::INVALID_ARGUMENT, "input '" + graph.inputs[i].name + "' was not given");
    }
  }

  std::lock_guard<std::mutex> lock(runMutex_);
  const std::string& tag = options.tag();
  if (!tag.empty()) log::debug("run '{}': started", tag);
  Stopwatch clock;
  progress_.cancellation = options.cancellationToken();
  if (options.profiling()) profiler_.start();
  if (!executor_) return Status(StatusCode::FAIL, "this session was created to compile a model, not to run it");
  deviceOutputs_ = deviceOutputs;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {  // outputs the run drops are not worth reading back
    if (std::find(selected.begin(), selected.end(), i) == selected.end()) deviceOutputs_.push_back(graph.outputs[i].name);
  }
  auto ran = executor_->runValues(bound);
  deviceOutputs_.clear();
  progress_.cancellation.reset();
  if (profiler_.active()) {
    RunProfile profile = makeRunProfile(profiler_.finish(), clock.elapsedMs());
    if (ran.isOk()) {
      std::lock_guard<std::mutex> profileLock(profileMutex_);
      lastProfile_ = std::move(profile);
    }
  }
  if (!ran.isOk()) {
    if (!tag.empty()) log::debug("run '{}': {}", tag, ran.status().toString());
    return tag.empty() ? ran.status() : ran.status().withContext("run '" + tag + "'");
  }
  std::vector<Value>& results = ran.value();
  std::vector<NamedValue> outputs;
  outputs.reserve(selected.size());
  for (size_t i : selected) {
    const std::string& name = graph.outputs[i].name;
    Value value = results[i];
    const bool stays = std::find(deviceOutputs.begin(), deviceOutputs.end(), name) != deviceOutputs.end();
    if (value.isTensor() && value.tensor().isOnDevice() && !stays) {  // e.g. a device input passed straight through
      auto host = value.tensor().toHost();
      if (!host.isOk()) return host.status().withContext("reading output '" + name + "' back from the device");
      outputReadBytes_.fetch_add(host.value().byteSize());
      value = host.value();
    }
    outputs.push_back({name, std::move(value)});
  }
  if (!tag.empty()) log::debug("run '{}': done in {:.3f} ms", tag, clock.elapsedMs());
  if (!firstRunDone_) {
    timings_.first_run_ms = clock.elapsedMs();
    firstRunDone_ = true;
  }
  return outputs;
}

// The model nodes of the compiled partition `name` as the partition report lists them.
std::vector<std::string> coveredNodes(const PartitionReport& report, const std::string& name) {
  for (const auto& graph : report.graphs) {
    for (const auto& partition : graph.partitions) {
      if (partition.compiled && partition.name == name) return partition.nodes;
    }
  }
  return {};
}

// Device ms and start per covered node (parallel to `covers`) from the partition's per-node times, matched by label
// in run order (unnamed nodes share labels); a covered node with no time of its own (fused away, run on the host)
// gets 0 for both.
void attachDeviceTimes(NodeTiming& timing, const std::vector<DeviceNodeTime>& times) {
  timing.coveredMs.assign(timing.covers.size(), 0.0);
  timing.coveredStartMs.assign(timing.covers.size(), 0.0);
  size_t next = 0;
  for (size_t c = 0; c < timing.covers.size() && next < times.size(); ++c) {
    for (size_t t = next; t < times.size(); ++t) {
      if (times[t].node != timing.covers[c]) continue;
      timing.coveredMs[c] = times[t].ms;
      timing.coveredStartMs[c] = times[t].startMs;
      next = t + 1;
      break;
    }
  }
}

// Names each profiled node's EP; a fused partition node also lists the model nodes its compiled partition runs.
RunProfile InferenceSession::makeRunProfile(std::vector<cpu::NodeProfiler::Entry> entries, double runMs) const {
  RunProfile profile;
  profile.runMs = runMs;
  for (const auto& entry : entries) {
    const ir::Node& node = *entry.node;
    NodeTiming timing;
    timing.node = node.name.empty() ? node.label() : node.name;
    timing.opType = node.opType;
    timing.graph = entry.graphPath;
    timing.executionProvider = kCpuExecutionProvider;
    timing.totalMs = entry.totalMs;
    timing.startMs = entry.startMs;
    timing.calls = entry.calls;
    if (entry.fusedInto) timing.fusedInto = entry.fusedInto->name.empty() ? entry.fusedInto->label() : entry.fusedInto->name;
    const int64_t index = node.opType == kFusedPartitionOpType && node.domain == kFusedPartitionDomain
                              ? node.attrInt(kFusedPartitionAttribute, -1) : -1;
    if (index >= 0 && static_cast<size_t>(index) < partitions_.size()) {
      const CompiledPartition& compiled = partitions_[static_cast<size_t>(index)].compiled;
      timing.executionProvider = compiled.executionProvider;
      timing.covers = coveredNodes(report_, compiled.name);
      const PartitionExecutable* executable = partitions_[static_cast<size_t>(index)].executable.get();
      const auto deviceTimes = executable ? executable->lastNodeDeviceTimes() : std::vector<DeviceNodeTime>{};
      if (!deviceTimes.empty()) attachDeviceTimes(timing, deviceTimes);
      for (const DeviceNodeTime& t : deviceTimes) timing.deviceSpans.push_back({t.node, t.startMs, t.ms});
    }
    profile.nodes.push_back(std::move(timing));
  }
  return profile;
}

Result<std::unique_ptr<Session>> createFromPrepared(PreparedModel prepared, const SessionOptions& options,
                                                    const SessionConfig& config, const Stopwatch& clock,
                                                    bool compileOnly) {
  auto session = std::make_unique<InferenceSession>();
  KILN_RETURN_IF_ERROR(session->initialize(std::move(prepared), options, config, clock, compileOnly));
  return std::unique_ptr<Session>(std::move(session));
}

Result<onnx_io::LoadedModel> loadSource(const ModelSource& source, const SessionConfig& config,
                                        bool deferLargeWeights = false) {
  onnx_io::LoadOptions loadOptions = loadOptionsFrom(config);
  loadOptions.deferLargeExternalData = deferLargeWeights;
  if (!source.path.empty()) return onnx_io::loadModelFile(source.path, loadOptions);
  return onnx_io::loadModelBuffer(source.bytes, loadOptions);
}

// What relative ep_cache_context paths resolve against: the model's folder, or for a model from memory the folder
// of ep.context_file_path (empty when unset: only embedded binaries load).
std::string contextBaseFolder(const ModelSource& source, const SessionOptions& options) {
  std::string anchor = source.path.empty() ? options.configEntryOr(config::kEpContextFilePath, "") : source.path;
  if (anchor.empty()) return {};
  const auto parent = std::filesystem::path(anchor).parent_path();
  return parent.empty() ? "." : parent.string();
}

// ONNX Runtime's session.disable_model_compile: a model that still needs compiling is refused.
Status checkCompileAllowed(const PreparedModel& prepared, const SessionConfig& config) {
  if (!config.disableModelCompile || prepared.plan.partitions.empty()) {
    return Status::ok();
  }
  const PlannedPartition& first = prepared.plan.partitions.front();
  return Status(StatusCode::MODEL_REQUIRES_COMPILATION,
                "User disabled EP compilation but EP '" + prepared.providers.providers[first.provider]->name() +
                    "' needs to compile one or more nodes (" + std::to_string(prepared.plan.partitions.size()) +
                    " partitions): compile the model first (kiln compile) and load its _ctx.onnx");
}

// Stored partitions name their EP: asking for it is explicit, so a CPU-type Vulkan device (lavapipe) counts.
// `config` with kiln.execution_providers=vulkan,cpu when it names none and a partition is the Vulkan EP's.
SessionConfig withStoredProviders(SessionConfig config, const CompiledModel& compiled) {
  if (config.executionProvidersSet) return config;
  bool vulkan = false;
  for (const auto& p : compiled.partitions) vulkan |= p.executionProvider == kVulkanExecutionProvider;
  if (vulkan) {
    config.executionProviders = {kVulkanProviderShortName, kCpuProviderShortName};  // kDefaultExecutionProviders
    config.executionProvidersSet = true;
  }
  return config;
}

// COMPILE_DEFERRING_WEIGHTS: a compile whose binary takes the deferred weights from their files.
enum class Purpose { RUN, COMPILE, COMPILE_DEFERRING_WEIGHTS };

// Session::create's steps. A model holding EPContext nodes is loaded from its context binaries (no optimizer,
// no placement, no glslang); any other is optimized, partitioned and compiled over the providers `makeProviders`
// creates, and, with ep.context_enable=1, written as an EPContext model.
template <class MakeProviders>
Result<CompilingSession> createSession(MakeProviders&& makeProviders, const ModelSource& source,
                                       const SessionOptions& options, Purpose purpose) {
  return guarded([&]() -> Result<CompilingSession> {
    Stopwatch clock;
    // The one parse of the configuration: a bad value fails before any work, and every step reads the struct.
    KILN_ASSIGN_OR_RETURN(const SessionConfig config, parseSessionConfig(options));
    std::optional<epctx::GenerationRequest> generation;
    if (purpose == Purpose::RUN) {
      KILN_ASSIGN_OR_RETURN(generation, epctx::generationRequestFor(source.path, config));  // before any work
    }
    if (options.progress.cancelled()) return Status(StatusCode::CANCELLED, "session creation cancelled");
    options.progress.report(ProgressStep::LOAD, 0, 1);
    // A compile leaves large external weights in their file until something reads them (deferred_weights.h).
    const bool defer = purpose == Purpose::COMPILE_DEFERRING_WEIGHTS && compileMayDeferWeights(options);
    KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, loadSource(source, config, defer));
    KILN_RETURN_IF_ERROR(resolveInputShapes(*loaded.model.graph, config.inputShapes).status());  // before any work
    CompilingSession out;
    out.originals = loaded.externalInitializers;
    if (!loaded.deferred.empty()) {
      KILN_RETURN_IF_ERROR(loadDeferredWeightsReadAtCompile(*loaded.model.graph, loaded.externalInitializers));
    }
    if (epctx::hasEpContextNodes(loaded.model)) {
      if (purpose != Purpose::RUN) {
        return Status(StatusCode::INVALID_GRAPH, "Encountered an invalid node while compiling a model. Please ensure "
                                                 "the input model is not already compiled (it has EPContext nodes).");
      }
      if (generation) log::info("ep.context_enable: the model is already compiled; nothing is generated");
      SessionTimings timings;
      timings.load_ms = loaded.loadMs;
      timings.shape_inference_ms = loaded.shapeInferenceMs;
      KILN_ASSIGN_OR_RETURN(CompiledModel compiled, epctx::compiledModelFromEpContext(std::move(loaded.model),
                                                                                      contextBaseFolder(source, options),
                                                                                      contextLoadOptions(config, options),
                                                                                      timings));
      KILN_ASSIGN_OR_RETURN(out.session,
                            createSessionFromCompiledModel(std::move(compiled), options, config, timings, &clock));
      return out;
    }
    KILN_ASSIGN_OR_RETURN(ProviderSet providers, makeProviders(config));
    ModelLoader alreadyLoaded = [&loaded]() -> Result<onnx_io::LoadedModel> { return std::move(loaded); };
    KILN_ASSIGN_OR_RETURN(PreparedModel prepared,
                          prepareModel(std::move(providers), alreadyLoaded, config, options.progress));
    KILN_RETURN_IF_ERROR(checkCompileAllowed(prepared, config));
    KILN_ASSIGN_OR_RETURN(out.session,
                          createFromPrepared(std::move(prepared), options, config, clock, purpose != Purpose::RUN));
    if (generation) {
      const auto ctxFolder = std::filesystem::path(generation->ctxModelPath).parent_path();
      KILN_ASSIGN_OR_RETURN(const epctx::CompileTarget target, compileTargetOf(options));
      generation->compileRecord = epctx::encodedCompileRecordFor(source, out.originals, resultChangingOptions(options),
                                                                 ctxFolder.empty() ? "." : ctxFolder.string(), target);
      KILN_RETURN_IF_ERROR(epctx::generateEpContext(*out.session, *generation, out.originals));
    }
    return out;
  });
}

template <class MakeProviders>
Result<std::unique_ptr<Session>> createRunSession(MakeProviders&& makeProviders, const ModelSource& source,
                                                  const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(CompilingSession created, createSession(makeProviders, source, options, Purpose::RUN));
  return std::move(created.session);
}

// The report of a compiled (EPContext) model, as a session over it reports it: binaries read and matched against
// the model, no device opened.
Result<PartitionReport> analyzeStored(onnx_io::LoadedModel loaded, const ModelSource& source,
                                      const SessionOptions& options, const SessionConfig& config) {
  SessionTimings unused;
  KILN_ASSIGN_OR_RETURN(CompiledModel compiled, epctx::compiledModelFromEpContext(std::move(loaded.model),
                                                                                  contextBaseFolder(source, options),
                                                                                  contextLoadOptions(config, options),
                                                                                  unused, false));
  const SessionConfig stored = withStoredProviders(config, compiled);
  const std::vector<std::string> names = providerNamesFor(stored.executionProviders);
  return makeStoredModelReport(*compiled.model.graph, compiled.partitions, compiled.origins, names, names.back());
}

template <class MakeProviders>
Result<PartitionReport> analyze(MakeProviders&& makeProviders, const ModelSource& source, const SessionOptions& options) {
  return guarded([&]() -> Result<PartitionReport> {
    KILN_ASSIGN_OR_RETURN(const SessionConfig config, parseSessionConfig(options));
    KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, loadSource(source, config));
    if (epctx::hasEpContextNodes(loaded.model)) return analyzeStored(std::move(loaded), source, options, config);
    KILN_ASSIGN_OR_RETURN(ProviderSet providers, makeProviders(config));
    ModelLoader alreadyLoaded = [&loaded]() -> Result<onnx_io::LoadedModel> { return std::move(loaded); };
    KILN_ASSIGN_OR_RETURN(PreparedModel prepared,
                          prepareModel(std::move(providers), alreadyLoaded, config, options.progress));
    KILN_RETURN_IF_ERROR(applyPartitionPlan(prepared.plan));
    return makePartitionReport(prepared.plan, prepared.optimization);
  });
}

}  // namespace

Result<std::unique_ptr<Session>> Session::create(const std::string& path, const SessionOptions& options) {
  if (isModelPackage(path)) return createSessionFromPackage(path, options);
  return createRunSession([](const SessionConfig& config) { return createProviders(config); }, ModelSource{path, {}}, options);
}

Result<std::unique_ptr<Session>> Session::create(std::span<const std::byte> modelBytes, const SessionOptions& options) {
  return createRunSession([](const SessionConfig& config) { return createProviders(config); }, ModelSource{{}, modelBytes}, options);
}

Result<CompilingSession> createCompilingSession(const ModelSource& source, const SessionOptions& options,
                                                bool deferWeights) {
  return createSession([](const SessionConfig& config) { return createProviders(config); }, source, options,
                       deferWeights ? Purpose::COMPILE_DEFERRING_WEIGHTS : Purpose::COMPILE);
}

Result<PartitionReport> analyzePartitions(const std::string& modelPath, const SessionOptions& options) {
  return analyze([](const SessionConfig& config) { return createProviders(config); }, ModelSource{modelPath, {}}, options);
}

Result<std::unique_ptr<Session>> createSessionWithProviders(const std::string& path, const SessionOptions& options,
                                                            std::vector<std::unique_ptr<ExecutionProvider>> providers) {
  auto make = [&](const SessionConfig&) -> Result<ProviderSet> { return providerSetFrom(std::move(providers)); };
  return createRunSession(make, ModelSource{path, {}}, options);
}

Result<CompiledModel> compiledModelOf(const Session& session) {
  const auto* inference = dynamic_cast<const InferenceSession*>(&session);
  if (!inference) return Status(StatusCode::INVALID_ARGUMENT, "not a session created by this engine");
  return inference->compiledModel();
}

Result<std::unique_ptr<Session>> createSessionFromCompiledModel(CompiledModel compiled, const SessionOptions& options,
                                                                const SessionConfig& config,
                                                                const SessionTimings& timings, const Stopwatch* started) {
  return guarded([&]() -> Result<std::unique_ptr<Session>> {
    const Stopwatch ownClock;
    const Stopwatch& clock = started ? *started : ownClock;
    KILN_ASSIGN_OR_RETURN(ProviderSet providers, createProviders(withStoredProviders(config, compiled)));
    auto session = std::make_unique<InferenceSession>();
    KILN_RETURN_IF_ERROR(
        session->initializeCompiled(std::move(providers), std::move(compiled), options, config, timings, clock));
    return std::unique_ptr<Session>(std::move(session));
  });
}

Result<PartitionReport> analyzePartitionsWithProviders(const std::string& path, const SessionOptions& options,
                                                       std::vector<std::unique_ptr<ExecutionProvider>> providers) {
  auto make = [&](const SessionConfig&) -> Result<ProviderSet> { return providerSetFrom(std::move(providers)); };
  return analyze(make, ModelSource{path, {}}, options);
}

}  // namespace kiln
