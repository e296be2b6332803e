// InferenceSession: load → shape inference → partition → compile + load partitions → run.
#include <cblas.h>

#include <set>
#include <sstream>
#include <unordered_map>

#include "ep/cpu/cpu_execution_provider.h"
#include "kiln/session.h"
#include "onnx/model_loader.h"
#include "partition/graph_partitioner.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln {
namespace {

// No exception crosses the API: anything thrown below (allocation failure, a library's throw) becomes a Status.
template <class F>
auto guarded(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::RUNTIME_EXCEPTION, "out of memory");
  } catch (const std::exception& e) {
    return Status(StatusCode::RUNTIME_EXCEPTION, std::string("unexpected exception: ") + e.what());
  }
}

struct LoadedPartition {
  CompiledPartition compiled;
  std::unique_ptr<PartitionExecutable> executable;
};

class InferenceSession final : public Session {
 public:
  const std::vector<ValueMetadata>& inputs() const override { return inputs_; }
  const std::vector<ValueMetadata>& outputs() const override { return outputs_; }
  const SessionTimings& timings() const override { return timings_; }
  const WorkCounters& counters() const override { return counters_; }
  const std::vector<PartitionSummary>& partitions() const override { return summaries_; }
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs) override {
    return guarded([&] { return runUnguarded(inputs); });
  }

  Status initialize(onnx_io::LoadedModel loaded, const SessionOptions& options, const Stopwatch& clock);

 private:
  Status checkInput(const ValueMetadata& meta, const Tensor& tensor) const;
  Result<std::vector<NamedTensor>> runUnguarded(const std::vector<NamedTensor>& inputs);

  ir::Model model_;
  std::vector<std::unique_ptr<ExecutionProvider>> providers_;
  std::vector<LoadedPartition> partitions_;
  std::vector<ValueMetadata> inputs_, outputs_;
  std::vector<PartitionSummary> summaries_;
  SessionTimings timings_;
  WorkCounters counters_;
  ProgressSink progress_;
  bool firstRunDone_ = false;
};

Result<int> threadCount(const SessionOptions& options) {
  const std::string value =
      options.configEntryOr("kiln.intra_op_num_threads", options.configEntryOr("session.intra_op_num_threads", "0"));
  try {
    const int n = std::stoi(value);
    if (n < 0) throw std::invalid_argument("negative");
    // Default 1: until the CPU EP has its own intra-op pool, the only threads are OpenBLAS's, and they spin
    // between GEMMs and slow Kiln's single-threaded kernels (PP-OCRv4 det on 2 vCPUs: 265 ms with 2 BLAS threads,
    // 168 ms with 1; tests/bench/kiln_cpu_bench --threads N).
    return n == 0 ? 1 : n;
  } catch (const std::exception&) {
    return Status(StatusCode::INVALID_ARGUMENT, "kiln.intra_op_num_threads must be a non-negative integer, got '" +
                                                    value + "'");
  }
}

// The EPs named by kiln.execution_providers that this build and machine can provide, in order.
Result<std::vector<std::unique_ptr<ExecutionProvider>>> createProviders(const SessionOptions& options) {
  const std::string list = options.configEntryOr("kiln.execution_providers", "vulkan,cpu");
  std::vector<std::unique_ptr<ExecutionProvider>> providers;
  std::stringstream stream(list);
  std::string name;
  const bool explicitList = options.configEntry("kiln.execution_providers").has_value();
  while (std::getline(stream, name, ',')) {
    if (name == "cpu") {
      providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
    } else if (name == "vulkan") {
      // The Vulkan EP arrives with its own issue; until then an explicit request is an error.
      if (explicitList && list == "vulkan") {
        return Status(StatusCode::NOT_IMPLEMENTED, "this build of Kiln has no Vulkan execution provider yet");
      }
      log::debug("Vulkan execution provider not available; using the next provider");
    } else {
      return Status(StatusCode::INVALID_ARGUMENT, "unknown execution provider '" + name +
                                                      "' in kiln.execution_providers (known: vulkan, cpu)");
    }
  }
  const bool disableFallback = options.configEntryOr("session.disable_cpu_ep_fallback", "0") == "1";
  if (providers.empty() && !disableFallback) providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
  if (providers.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "no execution provider is available for '" + list + "'");
  }
  return providers;
}

// kiln.free_dim_override.<dim_param>=N fixes a symbolic dimension: the input then accepts only N there.
Status applyFreeDimOverrides(const SessionOptions& options, ValueMetadata& input) {
  for (auto& dim : input.shape) {
    if (dim.isFixed() || dim.param.empty()) continue;
    const auto value = options.configEntry("kiln.free_dim_override." + dim.param);
    if (!value) continue;
    try {
      dim.value = std::stoll(*value);
      if (dim.value < 0) throw std::invalid_argument("negative");
    } catch (const std::exception&) {
      return Status(StatusCode::INVALID_ARGUMENT, "kiln.free_dim_override." + dim.param +
                                                      " must be a non-negative integer, got '" + *value + "'");
    }
  }
  return Status::ok();
}

Status InferenceSession::initialize(onnx_io::LoadedModel loaded, const SessionOptions& options, const Stopwatch& clock) {
  progress_ = options.progress;
  model_ = std::move(loaded.model);
  timings_.load_ms = loaded.loadMs;
  timings_.shape_inference_ms = loaded.shapeInferenceMs;
  const ir::Graph& graph = *model_.graph;

  KILN_ASSIGN_OR_RETURN(const int threads, threadCount(options));
  openblas_set_num_threads(threads);
  KILN_ASSIGN_OR_RETURN(providers_, createProviders(options));
  std::vector<ExecutionProvider*> order;
  for (auto& ep : providers_) order.push_back(ep.get());

  if (progress_.cancelled()) return Status(StatusCode::CANCELLED, "session creation cancelled");
  progress_.report("partition", 0, 1);
  Stopwatch partitionClock;
  KILN_ASSIGN_OR_RETURN(const PartitionPlan plan, partitionGraph(graph, model_, order));
  timings_.partition_ms = partitionClock.elapsedMs();

  const CompileContext context{model_, &progress_, threads};
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    if (progress_.cancelled()) return Status(StatusCode::CANCELLED, "session creation cancelled");
    progress_.report("compile", static_cast<int64_t>(i), static_cast<int64_t>(plan.partitions.size()));
    ExecutionProvider* ep = order[plan.partitionProvider[i]];
    Stopwatch compileClock;
    KILN_ASSIGN_OR_RETURN(CompiledPartition compiled, ep->compile(graph, plan.partitions[i], context));
    KILN_ASSIGN_OR_RETURN(auto executable, ep->load(compiled, context));
    timings_.kernel_select_ms += compileClock.elapsedMs();
    summaries_.push_back({compiled.name, ep->name(), static_cast<int64_t>(plan.partitions[i].nodeIndices.size())});
    partitions_.push_back({std::move(compiled), std::move(executable)});
  }
  progress_.report("compile", static_cast<int64_t>(plan.partitions.size()), static_cast<int64_t>(plan.partitions.size()));

  for (const auto& in : graph.inputs) {
    if (graph.isInitializer(in.name)) continue;
    inputs_.push_back(ir::toValueMetadata(in));
    KILN_RETURN_IF_ERROR(applyFreeDimOverrides(options, inputs_.back()));
  }
  for (const auto& out : graph.outputs) outputs_.push_back(ir::toValueMetadata(out));
  timings_.session_total_ms = clock.elapsedMs();
  return Status::ok();
}

Status InferenceSession::checkInput(const ValueMetadata& meta, const Tensor& tensor) const {
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

Result<std::vector<NamedTensor>> InferenceSession::runUnguarded(const std::vector<NamedTensor>& inputs) {
  Stopwatch clock;
  const ir::Graph& graph = *model_.graph;
  std::unordered_map<std::string, Tensor> values;
  for (const auto& [name, tensor] : graph.initializers) values[name] = tensor;
  for (const auto& input : inputs) {
    auto meta = std::find_if(inputs_.begin(), inputs_.end(), [&](const ValueMetadata& m) { return m.name == input.name; });
    if (meta == inputs_.end()) {
      const bool overridable = graph.isInitializer(input.name) &&
                               std::any_of(graph.inputs.begin(), graph.inputs.end(),
                                           [&](const ir::ValueInfo& v) { return v.name == input.name; });
      if (!overridable) return Status(StatusCode::INVALID_ARGUMENT, "the model has no input named '" + input.name + "'");
    } else {
      KILN_RETURN_IF_ERROR(checkInput(*meta, input.tensor));
    }
    values[input.name] = input.tensor;
  }
  for (const auto& meta : inputs_) {
    if (!values.count(meta.name)) return Status(StatusCode::INVALID_ARGUMENT, "input '" + meta.name + "' was not given");
  }
  for (auto& partition : partitions_) {
    std::vector<Tensor> partitionInputs;
    for (const auto& name : partition.compiled.inputs) {
      auto it = values.find(name);
      if (it == values.end()) {
        return Status(StatusCode::FAIL, "partition '" + partition.compiled.name + "' input '" + name + "' is missing");
      }
      partitionInputs.push_back(it->second);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> produced, partition.executable->run(partitionInputs));
    for (size_t i = 0; i < produced.size(); ++i) values[partition.compiled.outputs[i]] = std::move(produced[i]);
  }
  std::vector<NamedTensor> outputs;
  for (const auto& out : graph.outputs) {
    auto it = values.find(out.name);
    if (it == values.end()) return Status(StatusCode::FAIL, "output '" + out.name + "' was not produced");
    outputs.push_back({out.name, it->second});
  }
  if (!firstRunDone_) {
    timings_.first_run_ms = clock.elapsedMs();
    firstRunDone_ = true;
  }
  return outputs;
}

onnx_io::LoadOptions loadOptionsFrom(const SessionOptions& options) {
  onnx_io::LoadOptions load;
  load.externalDataFolder = options.configEntryOr("session.model_external_initializers_file_folder_path", "");
  return load;
}

Result<std::unique_ptr<Session>> finishCreate(Result<onnx_io::LoadedModel> loaded, const SessionOptions& options,
                                              const Stopwatch& clock) {
  if (!loaded.isOk()) return loaded.status();
  auto session = std::make_unique<InferenceSession>();
  KILN_RETURN_IF_ERROR(session->initialize(std::move(loaded).value(), options, clock));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace

Result<std::unique_ptr<Session>> Session::create(const std::string& path, const SessionOptions& options) {
  return guarded([&] {
    Stopwatch clock;
    options.progress.report("load", 0, 1);
    return finishCreate(onnx_io::loadModelFile(path, loadOptionsFrom(options)), options, clock);
  });
}

Result<std::unique_ptr<Session>> Session::create(std::span<const std::byte> modelBytes, const SessionOptions& options) {
  return guarded([&] {
    Stopwatch clock;
    options.progress.report("load", 0, 1);
    return finishCreate(onnx_io::loadModelBuffer(modelBytes, loadOptionsFrom(options)), options, clock);
  });
}

}  // namespace kiln
