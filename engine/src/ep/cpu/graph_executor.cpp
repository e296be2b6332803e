#include "ep/cpu/graph_executor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_set>

#include "ep/cpu/float16_compute.h"
#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ir/graph_paths.h"
#include "util/log.h"

namespace kiln::cpu {
namespace {

// Runs a body graph as a child of the executor that owns the control-flow node.
class BodyExecutor final : public SubgraphExecutor {
 public:
  explicit BodyExecutor(std::unique_ptr<GraphExecutor> executor) : executor_(std::move(executor)) {}
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs) override { return executor_->run(inputs); }
  Result<std::vector<Value>> runValues(std::span<const Value> inputs) override { return executor_->runValues(inputs); }

 private:
  std::unique_ptr<GraphExecutor> executor_;
};

// Whether a node of the graph may run a float GEMM through oneDNN's sgemm. Bodies are not looked at: their products
// are usually a step's few positions (Silero VAD's convolutions, inside If, all take the skinny path), and generating
// the JIT for them would add 20-30 ms to creation and 5 MB of JIT code for nothing.
bool mayUseSgemm(const ir::Graph& graph) {
  static const std::unordered_set<std::string> kGemmOps = {"Conv", "ConvTranspose", "Gemm", "MatMul", "LSTM",
                                                           "GRU", "RNN", "Einsum", "Attention"};
  return std::any_of(graph.nodes.begin(), graph.nodes.end(),
                     [](const ir::Node& node) { return node.domain.empty() && kGemmOps.count(node.opType) != 0; });
}

}  // namespace

int GraphExecutor::slotFor(const std::string& name) {
  auto [it, inserted] = slots_.emplace(name, static_cast<int>(frame_.size()));
  if (inserted) {
    frame_.emplace_back();
    pinned_.push_back(false);
  }
  return it->second;
}

Result<std::unique_ptr<GraphExecutor>> GraphExecutor::create(std::shared_ptr<const ir::Graph> graph,
                                                             const ExecutorConfig& config, const ValueScope* outer) {
  if (config.float16InFloat32 && !outer && hasFloat16ToCompute(*graph)) {
    auto widened = std::make_shared<ir::Graph>(*graph);
    const Float16ComputeStats stats = computeFloat16InFloat32(*widened);
    log::debug("CPU EP: graph '{}': {} float16 nodes compute in float32 ({} initializers widened, {} Casts added)",
               widened->name, stats.nodes, stats.initializers, stats.casts);
    graph = std::move(widened);
  }
  std::unique_ptr<GraphExecutor> executor(new GraphExecutor(std::move(graph), outer));
  ExecutorConfig shared = config;
  if (!shared.threadPool && shared.intraOpThreads > 1) shared.threadPool = ThreadPool::shared(shared.intraOpThreads);
  if (!shared.bufferPool) shared.bufferPool = std::make_shared<BufferPool>();
  if (!shared.deviceReadBytes) shared.deviceReadBytes = std::make_shared<std::atomic<uint64_t>>(0);
  executor->deviceReadBytes_ = shared.deviceReadBytes;
  executor->threadPool_ = shared.threadPool;
  executor->bufferPool_ = shared.bufferPool;
  const bool prepare = shared.prepareFirstRun && !outer;
  shared.prepareFirstRun = false;  // bodies' shapes usually depend on their iteration: they do not plan
  // oneDNN's sgemm JIT is generated on another core while the kernels are made, the memory planned and the caller
  // prepares its first run; creation does not wait for it (a first sgemm call meanwhile waits inside oneDNN's own
  // one-time initialization, as it would without the warm-up), the executor's destructor does.
  if (prepare && !sgemmWarm() && mayUseSgemm(*executor->graph_)) {
    try {
      executor->sgemmWarmUp_ = std::jthread([] { warmUpSgemm(); });
    } catch (const std::system_error&) {
      // No thread to spare: the first sgemm call generates the kernels, as without the warm-up.
    }
  }
  KILN_RETURN_IF_ERROR(executor->build(shared));
  if (prepare) {
    executor->plannedBuffers_ = executor->planMemory(config.maxTensorBytes);
    const BufferPool::Stats stats = executor->bufferPool_->stats();
    log::debug("CPU EP: graph '{}': first run's memory planned: {} values in {} buffers, {:.1f} MB",
               executor->graph_->name, executor->plannedBuffers_, stats.allocated,
               static_cast<double>(stats.allocatedBytes) / 1e6);
  }
  return executor;
}

Status GraphExecutor::build(const ExecutorConfig& config) {
  progress_ = config.progress;
  profiler_ = config.profiler;
  graphPath_ = config.graphPath;
  const ir::Graph& g = *graph_;
  std::unordered_set<std::string> defined;
  for (const auto& [name, tensor] : g.initializers) {
    const int slot = slotFor(name);
    frame_[slot] = tensor;
    pinned_[slot] = true;
    defined.insert(name);
  }
  // Initializers also listed as graph inputs may be fed by the caller: not constants for the kernels.
  std::unordered_set<std::string> overridable;
  for (const auto& in : g.inputs) {
    inputSlots_.push_back(slotFor(in.name));
    defined.insert(in.name);
    if (g.isInitializer(in.name)) overridable.insert(in.name);
  }
  for (const auto& node : g.nodes) defined.insert(node.outputs.begin(), node.outputs.end());

  auto resolve = [&](const std::string& name) {
    const int slot = slotFor(name);
    if (!defined.count(name)) {
      defined.insert(name);
      outerNames_.emplace_back(slot, name);
    }
    return slot;
  };

  steps_.reserve(g.nodes.size());
  for (const auto& node : g.nodes) {
    const int64_t opset = [&] {
      auto it = config.opsets.find(node.domain);
      return it == config.opsets.end() ? int64_t{0} : it->second;
    }();
    Step step;
    step.node = &node;
    KernelInfo info{node, opset, {}, {}, config.threadPool.get(), {}};
    info.floatOnOneDnn = config.floatOnOneDnn;
    for (const auto& in : node.inputs) {
      step.inputs.push_back(in.empty() ? -1 : resolve(in));
      auto init = g.initializers.find(in);
      const bool constant = !in.empty() && init != g.initializers.end() && !overridable.count(in);
      info.constantInputs.push_back(constant ? &init->second : nullptr);
      info.inputInfos.push_back(in.empty() ? nullptr : g.findValueInfo(in));
    }
    // Subgraph bodies read outer names through this executor; make sure those names have slots.
    for (const auto& name : g.implicitInputs(node)) resolve(name);
    const size_t index = static_cast<size_t>(&node - g.nodes.data());
    info.createSubgraphExecutor = [this, config, &node, index](const ir::Graph& body) -> Result<std::unique_ptr<SubgraphExecutor>> {
      // The body is owned by the node's attribute, which lives as long as graph_; alias it without copying.
      std::shared_ptr<const ir::Graph> alias(graph_, &body);
      ExecutorConfig bodyConfig = config;
      bodyConfig.graphPath = ir::bodyPath(node, index, graphPath_, body);
      KILN_ASSIGN_OR_RETURN(auto child, GraphExecutor::create(alias, bodyConfig, this));
      return std::unique_ptr<SubgraphExecutor>(new BodyExecutor(std::move(child)));
    };
    if (config.externalKernel) {
      auto external = config.externalKernel(info);
      if (!external.isOk()) return external.status().withContext("creating the kernel of node " + node.label());
      step.kernel = std::move(external).value();
      step.external = step.kernel != nullptr;
    }
    if (!step.kernel) {
      const KernelDef* def = KernelRegistry::cpu().find(node.domain, node.opType, opset);
      if (!def) {
        return Status(StatusCode::NOT_IMPLEMENTED,
                      "no CPU kernel for " + (node.domain.empty() ? "" : node.domain + ".") + node.opType +
                          " at opset " + std::to_string(opset) + " (node " + node.label() + ")");
      }
      auto kernel = def->factory(info);
      if (!kernel.isOk()) return kernel.status().withContext("creating the kernel of node " + node.label());
      step.kernel = std::move(kernel).value();
    }
    for (const auto& out : node.outputs) step.outputs.push_back(out.empty() ? -1 : slotFor(out));
    steps_.push_back(std::move(step));
  }
  for (const auto& out : g.outputs) outputSlots_.push_back(resolve(out.name));

  // Elementwise chains after convolutions run inside them (the followers' kernels stay as the fallback).
  const int64_t defaultOpset = [&] {
    auto it = config.opsets.find("");
    return it == config.opsets.end() ? int64_t{0} : it->second;
  }();
  std::vector<PlannedEpilogue> plans = planEpilogues(g, overridable, defaultOpset);
  for (const auto& plan : plans) fusedNodes_ += plan.followers.size();
  if (!plans.empty()) {
    log::debug("CPU EP: graph '{}': {} elementwise nodes fused into {} convolutions", g.name, fusedNodes_, plans.size());
  }
  for (auto& plan : plans) {
    Step& anchor = steps_[plan.anchor];
    anchor.epilogue = std::move(plan.epilogue);
    for (const auto& name : plan.inputs) anchor.epilogueInputs.push_back(resolve(name));
    anchor.epilogueOutput = slotFor(plan.output);
    for (size_t follower : plan.followers) steps_[follower].fusedInto = static_cast<int>(plan.anchor);
  }
  chainApplied_.assign(steps_.size(), 0);

  // Release each non-pinned, non-output slot after its last reader (implicit reads by subgraphs count).
  std::unordered_set<int> keep(outputSlots_.begin(), outputSlots_.end());
  for (const auto& [slot, _] : outerNames_) keep.insert(slot);
  std::vector<int> lastReader(frame_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int slot : steps_[s].inputs) {
      if (slot >= 0) lastReader[slot] = static_cast<int>(s);
    }
    for (const auto& name : g.implicitInputs(*steps_[s].node)) lastReader[slots_.at(name)] = static_cast<int>(s);
  }
  for (size_t slot = 0; slot < frame_.size(); ++slot) {
    if (lastReader[slot] >= 0 && !pinned_[slot] && !keep.count(static_cast<int>(slot))) {
      steps_[static_cast<size_t>(lastReader[slot])].release.push_back(static_cast<int>(slot));
    }
  }
  values_.resize(frame_.size());
  for (auto& step : steps_) {
    step.boundInputs.resize(step.inputs.size());
    step.boundValueInputs.resize(step.inputs.size());
    step.producedTensors.resize(step.outputs.size());
    step.producedValues.resize(step.outputs.size());
  }
  std::vector<char> cleared(frame_.size(), 0);
  for (size_t slot = 0; slot < frame_.size(); ++slot) cleared[slot] = !pinned_[slot];
  for (int slot : inputSlots_) cleared[static_cast<size_t>(slot)] = 1;
  for (size_t slot = 0; slot < frame_.size(); ++slot) {
    if (cleared[slot]) clearedSlots_.push_back(static_cast<int>(slot));
  }
  return Status::ok();
}

const Tensor* GraphExecutor::lookup(const std::string& name) const {
  auto it = slots_.find(name);
  if (it != slots_.end() && frame_[static_cast<size_t>(it->second)].defined()) return &frame_[static_cast<size_t>(it->second)];
  return outer_ ? outer_->lookup(name) : nullptr;
}

const Value* GraphExecutor::lookupValue(const std::string& name) const {
  auto it = slots_.find(name);
  if (it != slots_.end()) {
    const auto slot = static_cast<size_t>(it->second);
    if (values_[slot].defined()) return &values_[slot];
    if (frame_[slot].defined()) return nullptr;
  }
  return outer_ ? outer_->lookupValue(name) : nullptr;
}

Result<std::vector<Tensor>> GraphExecutor::run(std::span<const Tensor> inputs) {
  const std::vector<Value> values(inputs.begin(), inputs.end());
  KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, runValues(values));
  std::vector<Tensor> tensors;
  tensors.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].isTensor()) {
      return Status(StatusCode::INVALID_ARGUMENT, "output '" + graph_->outputs[i].name + "' of graph '" +
                                                      graph_->name + "' is a " + valueKindName(outputs[i].kind()) +
                                                      ", not a tensor");
    }
    tensors.push_back(outputs[i].tensor());
  }
  return tensors;
}

void GraphExecutor::clearRunValues() {
  for (int slot : clearedSlots_) {
    const auto s = static_cast<size_t>(slot);
    if (!pinned_[s]) frame_[s] = Tensor();
    values_[s] = Value();
  }
  // An initializer the caller fed as an input gets its own value back for the next run.
  for (size_t i = 0; i < inputSlots_.size(); ++i) {
    const auto slot = static_cast<size_t>(inputSlots_[i]);
    if (pinned_[slot]) frame_[slot] = graph_->initializers.at(graph_->inputs[i].name);
  }
}

Status GraphExecutor::bindOuterValues() {
  if (!outerBound_) {
    // Every name a body reads has a slot in the executor that runs the body's node (build() resolves the node's
    // implicit inputs there), so a body binds to its direct parent's slots.
    const auto* parent = dynamic_cast<const GraphExecutor*>(outer_);
    outerBindings_.clear();
    for (const auto& [slot, name] : outerNames_) {
      OuterBinding binding;
      binding.slot = slot;
      if (parent) {
        auto it = parent->slots_.find(name);
        if (it != parent->slots_.end()) {
          binding.tensor = &parent->frame_[static_cast<size_t>(it->second)];
          binding.value = &parent->values_[static_cast<size_t>(it->second)];
        }
      }
      outerBindings_.push_back(binding);
    }
    outerBound_ = true;
  }
  for (size_t i = 0; i < outerBindings_.size(); ++i) {
    const OuterBinding& binding = outerBindings_[i];
    const auto slot = static_cast<size_t>(binding.slot);
    // The parent's own tensor is what lookup() would find first; anything else takes the general path.
    if (binding.tensor && binding.tensor->defined()) {
      frame_[slot] = *binding.tensor;
      continue;
    }
    const std::string& name = outerNames_[i].second;
    const Tensor* value = outer_ ? outer_->lookup(name) : nullptr;
    if (const Value* other = !value && outer_ ? outer_->lookupValue(name) : nullptr) {
      values_[slot] = *other;
      continue;
    }
    if (!value) {
      return Status(StatusCode::INVALID_GRAPH, "graph '" + graph_->name + "' reads '" + name +
                                                   "', which no enclosing scope provides");
    }
    frame_[slot] = *value;
  }
  return Status::ok();
}

Status GraphExecutor::readDeviceInputs(Step& step) {
  for (size_t i = 0; i < step.boundInputs.size(); ++i) {
    if (!step.boundInputs[i] || !step.boundInputs[i]->isOnDevice()) continue;
    if (step.hostCopies.size() != step.boundInputs.size()) step.hostCopies.resize(step.boundInputs.size());
    KILN_ASSIGN_OR_RETURN(step.hostCopies[i], step.boundInputs[i]->toHost());
    deviceReadBytes_->fetch_add(step.hostCopies[i].byteSize());
    step.boundInputs[i] = &step.hostCopies[i];
  }
  return Status::ok();
}

Result<std::vector<Value>> GraphExecutor::runValues(std::span<const Value> inputs) {
  if (running_) return Status(StatusCode::FAIL, "graph '" + graph_->name + "' is already running (recursive call)");
  if (inputs.size() > inputSlots_.size()) {
    return Status(StatusCode::INVALID_ARGUMENT, "graph '" + graph_->name + "' takes " +
                                                    std::to_string(inputSlots_.size()) + " inputs, got " +
                                                    std::to_string(inputs.size()));
  }
  running_ = true;
  struct Reset {
    GraphExecutor* self;
    ~Reset() {
      self->running_ = false;
      self->clearRunValues();
    }
  } reset{this};

  for (size_t i = 0; i < inputSlots_.size(); ++i) {
    if (i < inputs.size() && inputs[i].defined()) {
      if (inputs[i].isTensor()) {
        frame_[static_cast<size_t>(inputSlots_[i])] = inputs[i].tensor();
      } else {
        values_[static_cast<size_t>(inputSlots_[i])] = inputs[i];
      }
    } else if (!pinned_[static_cast<size_t>(inputSlots_[i])]) {
      return Status(StatusCode::INVALID_ARGUMENT, "input '" + graph_->inputs[i].name + "' was not given");
    }
  }
  KILN_RETURN_IF_ERROR(bindOuterValues());

  std::array<const Tensor*, EpilogueBinding::kMaxInputs> epilogueInputs{};
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (progress_ && progress_->cancelled()) return Status(StatusCode::CANCELLED, "run cancelled");
    const bool timed = profiler_ && profiler_->active();
    if (step.fusedInto >= 0 && chainApplied_[static_cast<size_t>(step.fusedInto)]) {
      if (timed) profiler_->recordFused(graphPath_, *step.node, *steps_[static_cast<size_t>(step.fusedInto)].node);
      for (int slot : step.release) frame_[static_cast<size_t>(slot)] = Tensor();
      for (int slot : step.release) values_[static_cast<size_t>(slot)] = Value();
      continue;
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int slot = step.inputs[i];
      const Tensor* t = slot >= 0 ? &frame_[static_cast<size_t>(slot)] : nullptr;
      step.boundInputs[i] = t && t->defined() ? t : nullptr;
      const Value* v = slot >= 0 ? &values_[static_cast<size_t>(slot)] : nullptr;
      step.boundValueInputs[i] = v && v->defined() ? v : nullptr;
    }
    if (!step.external) KILN_RETURN_IF_ERROR(readDeviceInputs(step).withContext("node " + step.node->label()));
    std::optional<EpilogueBinding> binding;
    if (step.epilogue) {
      for (size_t i = 0; i < step.epilogueInputs.size(); ++i) {
        Tensor& t = frame_[static_cast<size_t>(step.epilogueInputs[i])];
        if (t.isOnDevice()) {
          KILN_ASSIGN_OR_RETURN(t, t.toHost());
          deviceReadBytes_->fetch_add(t.byteSize());
        }
        epilogueInputs[i] = t.defined() ? &t : nullptr;
      }
      binding.emplace(*step.epilogue, std::span<const Tensor* const>(epilogueInputs.data(), step.epilogueInputs.size()));
    }
    std::vector<Tensor>& outputs = step.producedTensors;
    std::vector<Value>& valueOutputs = step.producedValues;
    KernelContext ctx(step.boundInputs, outputs, bufferPool_.get(), binding ? &*binding : nullptr);
    ctx.bindValues(step.boundValueInputs, &valueOutputs);
    const auto started = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    Status status = step.kernel->compute(ctx);
    if (timed) {
      profiler_->record(graphPath_, *step.node,
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    }
    // Kernel messages start with the op type, so the context names the node only ("node 'conv1': Conv: ...").
    if (!status.isOk()) {
      for (auto& t : outputs) t = Tensor();
      for (auto& v : valueOutputs) v = Value();
      return status.withContext(step.node->name.empty() ? "node " + step.node->label() : "node '" + step.node->name + "'");
    }
    chainApplied_[s] = binding && binding->applied();
    if (chainApplied_[s]) frame_[static_cast<size_t>(step.epilogueOutput)] = std::move(outputs[0]);
    for (size_t i = chainApplied_[s] ? 1 : 0; i < step.outputs.size(); ++i) {
      if (step.outputs[i] >= 0) frame_[static_cast<size_t>(step.outputs[i])] = std::move(outputs[i]);
    }
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (step.outputs[i] >= 0 && valueOutputs[i].defined()) {
        values_[static_cast<size_t>(step.outputs[i])] = std::move(valueOutputs[i]);
      }
      outputs[i] = Tensor();  // the step's arrays start the next run empty, holding no storage
      valueOutputs[i] = Value();
    }
    for (auto& copy : step.hostCopies) copy = Tensor();
    for (int slot : step.release) frame_[static_cast<size_t>(slot)] = Tensor();
    for (int slot : step.release) values_[static_cast<size_t>(slot)] = Value();
  }

  std::vector<Value> results;
  results.reserve(outputSlots_.size());
  for (size_t i = 0; i < outputSlots_.size(); ++i) {
    const auto slot = static_cast<size_t>(outputSlots_[i]);
    const Value value = values_[slot].defined() ? values_[slot] : Value(frame_[slot]);
    if (!value.defined()) {
      return Status(StatusCode::FAIL, "output '" + graph_->outputs[i].name + "' of graph '" + graph_->name +
                                          "' was not produced");
    }
    results.push_back(value);
  }
  return results;
}

}  // namespace kiln::cpu
