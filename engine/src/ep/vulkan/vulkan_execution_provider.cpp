#include "ep/vulkan/vulkan_execution_provider.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <future>
#include <optional>
#include <thread>
#include <map>
#include <set>
#include <unordered_set>

#include "device/device_profile.h"
#include "kiln/provider_names.h"
#include "ep/vulkan/device_fusions.h"
#include "ep/vulkan/qdq_fusions.h"
#include "ep/vulkan/float16_storage.h"
#include "ep/vulkan/host_kernel.h"
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/partition_executable.h"
#include "ep/vulkan/pipeline_cache.h"
#include "ep/vulkan/pipeline_registry.h"
#include "ep/vulkan/vulkan_device.h"
#include "util/log.h"
#include "util/parallel.h"
#include "util/stopwatch.h"

namespace kiln::vk {

const char* const kVulkanExecutionProviderName = kiln::kVulkanExecutionProvider;

namespace {

// The partition's own graph: its nodes (in order) and the initializers (outer-scope ones included: constants of a
// body's partition) and value info they read.
std::shared_ptr<ir::Graph> extractPartitionGraph(const ir::Graph& graph, const ir::Model& model,
                                                 const PartitionSpec& spec) {
  auto sub = std::make_shared<ir::Graph>();
  sub->name = spec.name;
  std::set<std::string> names;
  for (size_t index : spec.nodeIndices) {
    const ir::Node& node = graph.nodes[index];
    sub->nodes.push_back(node);
    for (const auto& in : node.inputs) names.insert(in);
    for (const auto& out : node.outputs) names.insert(out);
  }
  for (const auto& name : names) {
    if (name.empty()) continue;
    if (const Tensor* init = findInitializerInScope(graph, model, name)) sub->initializers.emplace(name, *init);
    if (const ir::ValueInfo* info = findValueInfoInModel(graph, model, name)) sub->valueInfo.emplace(name, *info);
  }
  for (const auto& name : spec.inputs) {
    if (sub->isInitializer(name)) continue;  // the partition holds it: not a run-time input
    ir::ValueInfo info;
    info.name = name;
    if (const ir::ValueInfo* known = findValueInfoInModel(graph, model, name)) info = *known;
    sub->inputs.push_back(info);
  }
  for (const auto& name : spec.outputs) {
    ir::ValueInfo info;
    info.name = name;
    if (const ir::ValueInfo* known = findValueInfoInModel(graph, model, name)) info = *known;
    sub->outputs.push_back(info);
  }
  return sub;
}

// The Conv kernels apply kiln_activation (see kernels/conv.cpp).
constexpr bool kFuseConvActivations = true;

// SPIR-V for every variant: from the pipeline cache file when one is open and holds it (a file hit, counted in
// pipeline_cache_hits, runs no glslang), otherwise (a counted miss, or no file) from compileShader, which serves
// repeats from the process-wide SPIR-V cache and runs glslang on up to hardware_concurrency threads (glslang keeps
// its state per thread); new SPIR-V is added to the file. The file is asked first so that its hits show even when
// this process compiled the variant already. Progress is reported on the calling thread as results arrive;
// cancellation is checked before each compile.
Result<std::map<std::string, std::vector<uint32_t>>> compileVariants(const std::map<std::string, ShaderVariant>& variants,
                                                                     const DeviceInfo& device, const std::string& partition,
                                                                     const CompileContext& context,
                                                                     PipelineCacheFile* cacheFile) {
  std::map<std::string, std::vector<uint32_t>> modules;
  std::vector<const ShaderVariant*> work;
  std::vector<uint64_t> fileKeys;  // spirvKey of each work item, when there is a file
  for (const auto& [key, variant] : variants) {
    if (cacheFile) {
      const uint64_t fileKey = spirvKey(variant, device);
      if (auto words = cacheFile->findSpirv(fileKey)) {
        if (context.counters) context.counters->pipeline_cache_hits++;
        modules.emplace(key, std::move(*words));
        continue;
      }
      if (context.counters) context.counters->pipeline_cache_misses++;
      fileKeys.push_back(fileKey);
    }
    work.push_back(&variant);
  }
  std::vector<std::optional<Result<SpirvResult>>> results(work.size());
  Stopwatch clock;
  runParallel(
      work.size(),
      [&](size_t i) {
        results[i] = context.progress && context.progress->cancelled()
                         ? Result<SpirvResult>(Status(StatusCode::CANCELLED, "compilation of " + partition + " cancelled"))
                         : compileShader(*work[i], device);
      },
      [&](size_t done) {
        if (context.progress) {
          context.progress->report(ProgressStep::GLSLANG, static_cast<int64_t>(done), static_cast<int64_t>(work.size()),
                                   partition);
        }
      });
  if (context.timings) context.timings->glslang_ms += clock.elapsedMs();  // wall time of the stage

  for (size_t i = 0; i < work.size(); ++i) {
    if (!results[i]->isOk()) return results[i]->status();
    SpirvResult& spirv = results[i]->value();
    if (context.counters) (spirv.cacheHit ? context.counters->spirv_cache_hits : context.counters->glslang_compiles)++;
    if (cacheFile) cacheFile->addSpirv(fileKeys[i], spirv.words);
    modules.emplace(work[i]->key(), std::move(spirv.words));
  }
  if (context.progress && context.progress->cancelled()) {
    return Status(StatusCode::CANCELLED, "compilation of " + partition + " cancelled");
  }
  return modules;
}

struct KernelSet {
  std::vector<PartitionStep> steps;
  bool pipelinesReady = false;  // every step's pipelines are set (prepareLoad created them)
  // Loading a weightless binary: constants it stored as type and shape only, prepacked again, and the time taken.
  int64_t derivedConstants = 0;
  double deriveMs = 0;
  bool derivedReported = false;  // added to the session's timings and counters already
};

// Which nodes dispatch each shader variant: node i for every variant its kernel lists (what a context binary's
// pipeline_users section records).
std::map<std::string, std::vector<size_t>> pipelineUsersOf(const KernelSet& kernels) {
  std::map<std::string, std::vector<size_t>> users;
  for (size_t i = 0; i < kernels.steps.size(); ++i) {
    if (!kernels.steps[i].kernel) continue;
    for (const auto& variant : kernels.steps[i].kernel->shaders()) {
      std::vector<size_t>& nodes = users[variant.key()];
      if (nodes.empty() || nodes.back() != i) nodes.push_back(i);
    }
  }
  return users;
}

// The stored autotune choice of each node (empty where none). INVALID_GRAPH when a choice names a node the
// partition does not have (a corrupt tuning section).
Result<std::vector<std::string>> tunedChoices(const PartitionTuning& tuning, size_t nodes,
                                              const std::string& partition) {
  std::vector<std::string> chosen(nodes);
  for (const auto& k : tuning.kernels) {
    if (k.node >= nodes) {
      return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: the autotune choice for '" + k.label +
                                                   "' names node " + std::to_string(k.node) + " of partition " +
                                                   partition + ", which has " + std::to_string(nodes) + " nodes");
    }
    chosen[k.node] = k.chosen;
  }
  return chosen;
}

// A constant a weightless binary stored as type and shape only (its kernel derives it again at load).
bool isDerivedAtLoad(const Tensor& constant) {
  return constant.dtype() != DataType::STRING && constant.rawData() == nullptr && constant.numel() > 0;
}

// Creates the kernel of every node of a partition graph for `target`: host kernels where `onHost`, Vulkan kernels
// elsewhere. `stored` (loading a context binary) supplies the constants an earlier compile prepacked; `tuned`, the
// autotune choice of each node (empty: the kernel's default, or every candidate with `autotune`).
Result<KernelSet> createKernels(const ir::Graph& graph, const ir::Model& opsets, const DeviceInfo& target,
                                const HostEvaluator& host, const std::vector<bool>& onHost,
                                const std::vector<CompiledNode>* stored, bool autotune,
                                const std::vector<std::string>* tuned = nullptr) {
  KernelSet kernels;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    const int64_t opset = opsetFor(opsets, node);
    PartitionStep step;
    step.node = &node;
    if (onHost[i]) {
      KILN_ASSIGN_OR_RETURN(step.hostKernel, createHostKernel(node, opset, graph, host));
      kernels.steps.push_back(std::move(step));
      continue;
    }
    const KernelEntry* entry = findKernel(node.domain, node.opType, opset);
    if (!entry) return Status(StatusCode::INVALID_GRAPH, "no Vulkan kernel for " + node.label() + " (opset " + std::to_string(opset) + ")");
    KernelCreateInfo info{node, opset, target, {}, {}, {}, autotune};
    const std::vector<Tensor>* storedConstants = stored ? &(*stored)[i].constants : nullptr;
    // Weightless: the node prepacks again, from weights its initializers now hold (they came from the source).
    const bool derive = storedConstants && std::any_of(storedConstants->begin(), storedConstants->end(), isDerivedAtLoad);
    if (!derive) info.storedConstants = storedConstants;
    if (tuned && i < tuned->size()) info.tunedCandidate = (*tuned)[i];
    for (const auto& in : node.inputs) {
      auto init = graph.initializers.find(in);
      info.constantInputs.push_back(in.empty() || init == graph.initializers.end() ? nullptr : &init->second);
      info.inputInfo.push_back(in.empty() ? nullptr : graph.findValueInfo(in));
    }
    for (const auto& out : node.outputs) info.outputInfo.push_back(out.empty() ? nullptr : graph.findValueInfo(out));
    Stopwatch deriveClock;
    auto kernel = entry->create(info);
    if (!kernel.isOk()) return kernel.status().withContext("creating the Vulkan kernel of " + node.label());
    step.kernel = std::move(kernel).value();
    if (derive) {
      kernels.deriveMs += deriveClock.elapsedMs();
      kernels.derivedConstants += static_cast<int64_t>(std::count_if(storedConstants->begin(), storedConstants->end(), isDerivedAtLoad));
    }
    if (stored) {
      const auto& constants = step.kernel->constants();
      bool match = constants.size() == (*stored)[i].constants.size() &&
                   std::all_of(constants.begin(), constants.end(), [](const Tensor& t) { return t.defined(); });
      for (size_t k = 0; match && derive && k < constants.size(); ++k) {
        const Tensor& want = (*storedConstants)[k];
        match = constants[k].dtype() == want.dtype() && constants[k].shape() == want.shape();
      }
      if (!match) {
        return Status(StatusCode::INVALID_GRAPH, "the stored constants of " + node.label() + " do not match its kernel (" +
                                                     std::to_string((*stored)[i].constants.size()) + " stored)");
      }
    }
    kernels.steps.push_back(std::move(step));
  }
  return kernels;
}

class VulkanExecutionProvider final : public ExecutionProvider {
 public:
  // `target`: what kernels are chosen and SPIR-V compiled for: the live device, or a device profile
  // (kiln.vulkan.target_profile). `device`: the live device that loads and runs partitions. `cacheFile`: the
  // pipeline cache file (kiln.vulkan.pipeline_cache_path), else null. `host`: evaluates HOST nodes.
  // `fp16`: kiln.vulkan.fp16 (float32 partitions store their tensors as float16, see float16_storage.h).
  VulkanExecutionProvider(DeviceInfo target, bool targetIsProfile,
                          std::shared_future<Result<std::shared_ptr<Device>>> device, bool profile, bool autotune,
                          bool fp16, std::shared_ptr<PipelineCacheFile> cacheFile,
                          std::shared_ptr<const HostEvaluator> host,
                          std::map<std::string, std::vector<int64_t>> givenShapes,
                          std::map<std::string, int64_t> freeDims)
      : givenShapes_(std::move(givenShapes)), freeDims_(std::move(freeDims)), target_(std::move(target)),
        targetIsProfile_(targetIsProfile), targetProfile_(deviceProfileJson(target_)),
        deviceFuture_(std::move(device)), profile_(profile), autotune_(autotune), fp16_(fp16),
        cacheFile_(std::move(cacheFile)), host_(std::move(host)) {}

  // A session whose creation failed after adding SPIR-V still leaves it for the next one.
  ~VulkanExecutionProvider() override { saveCacheFile(); }

  Status onSessionInitializationEnd() override {
    saveCacheFile();
    return Status::ok();  // the pipeline cache is an optimization: saving problems are warnings
  }

  const std::string& name() const override { return name_; }

  // A profile target's binary stores no driver cache (there is no device to fill one): compiling is enough.
  bool exportNeedsLoad() const override { return !targetIsProfile_; }

  std::vector<NodeSupport> getCapability(const ir::Graph& graph, const ir::Model& model) const override {
    std::vector<NodeSupport> answers;
    for (const auto& placement : placeNodes(graph, model, target_, *host_)) {
      answers.push_back(
          {placement.placement != Placement::NONE, placement.reason, placement.placement == Placement::HOST});
    }
    return answers;
  }

  bool paysForTransfers() const override { return true; }

  Result<CompiledPartition> compile(const ir::Graph& graph, const PartitionSpec& spec,
                                    const CompileContext& context) override {
    if (!targetIsProfile_) KILN_RETURN_IF_ERROR(waitForDevice(context).status());
    auto sub = extractPartitionGraph(graph, context.model, spec);
    Stopwatch fusionClock;
    FusionStats fusions = applyDeviceFusions(*sub, spec.outputs, kFuseConvActivations);
    const int qdqDropped = dropQdqAroundDataMovement(*sub, spec.outputs, target_.storageBuffer8Bit,
                                                     context.model.opsetVersion(""));
    if (context.timings) context.timings->weight_prepack_ms += fusionClock.elapsedMs();
    if (context.counters) context.counters->weights_prepacked += fusions.batchNormsFolded;
    std::vector<size_t> all(sub->nodes.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    {
      std::vector<bool> onDevice;
      for (const auto& placement : placeNodes(*sub, context.model, target_, *host_, all)) {
        onDevice.push_back(placement.placement == Placement::DEVICE);
      }
      fuseElementwiseChains(*sub, spec.outputs, context.model.opsetVersion(""), onDevice, fusions);
      log::debug("{}: {} BatchNormalization folded, {} elementwise chains ({} nodes) fused, {} QDQ pairs dropped",
                 spec.name, fusions.batchNormsFolded, fusions.elementwiseChains, fusions.elementwiseNodesFused,
                 qdqDropped);
      all.resize(sub->nodes.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    }
    if (fp16_) {
      const Float16StorageStats stored = storeFloatsAsFloat16(*sub, spec.outputs, [&](const ir::Graph& half) {
        std::vector<bool> claimed;
        for (const auto& placement : placeNodes(half, context.model, target_, *host_)) {
          claimed.push_back(placement.placement == Placement::DEVICE);
        }
        return claimed;
      });
      log::debug("{}: kiln.vulkan.fp16: {} nodes and {} initializers store float16, {} casts added", spec.name,
                 stored.nodes, stored.initializers, stored.casts);
      all.resize(sub->nodes.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    }

    Stopwatch selectClock;
    std::vector<bool> onHost;
    for (const auto& placement : placeNodes(*sub, context.model, target_, *host_, all)) {
      if (placement.placement == Placement::NONE) {
        return Status(StatusCode::EP_FAIL, "a node of " + spec.name + " was assigned to the Vulkan EP but " + placement.reason);
      }
      onHost.push_back(placement.placement == Placement::HOST);
    }
    KILN_ASSIGN_OR_RETURN(KernelSet kernels,
                          createKernels(*sub, context.model, target_, *host_, onHost, nullptr, autotune_));
    if (context.timings) context.timings->kernel_select_ms += selectClock.elapsedMs();

    CompiledPartition compiled;
    compiled.name = spec.name;
    compiled.executionProvider = name_;
    // Run-time inputs only: the initializers the nodes read live in the partition (uploaded once, or absorbed into
    // prepacked constants); feeding them at every run would replace the uploaded copies.
    for (const auto& in : sub->inputs) compiled.inputs.push_back(in.name);
    compiled.outputs = spec.outputs;
    compiled.graph = sub;
    compiled.opsets = context.model.opsetImports;
    compiled.targetProfile = targetProfile_;
    compiled.targetIsProfile = targetIsProfile_;
    for (size_t i = 0; i < kernels.steps.size(); ++i) {
      CompiledNode node;
      node.onHost = onHost[i];
      if (kernels.steps[i].kernel) {
        node.constants = kernels.steps[i].kernel->constants();
        node.absorbedInputs = kernels.steps[i].kernel->absorbedInputs();
      }
      if (context.counters) context.counters->weights_prepacked += static_cast<int64_t>(node.constants.size());
      compiled.nodes.push_back(std::move(node));
    }

    // SPIR-V for every variant (deduplicated; the process-wide cache serves repeats without glslang).
    std::map<std::string, ShaderVariant> variants;
    for (const auto& step : kernels.steps) {
      if (!step.kernel) continue;
      for (const auto& variant : step.kernel->shaders()) variants.emplace(variant.key(), variant);
    }
    KILN_ASSIGN_OR_RETURN(compiled.spirv, compileVariants(variants, target_, spec.name, context, cacheFile_.get()));
    compiled.pipelineUsers = pipelineUsersOf(kernels);
    auto kept = std::make_shared<KernelSet>(std::move(kernels));
    if (autotune_) KILN_RETURN_IF_ERROR(tuneAtCompile(compiled, kept, context));
    // The cold path loads right after compiling: keep the kernels (or the tuned executable) for load.
    std::lock_guard lock(pendingMutex_);
    if (kept) pending_[spec.name] = std::move(kept);
    return compiled;
  }

  // Stored partitions (Silero VAD's ctx model has 60, each with a few pipelines): kernels recreated now and every
  // partition's pipelines created in one parallel stage, instead of a few at a time in each load().
  Status prepareLoad(std::span<const CompiledPartition* const> partitions, const CompileContext& context) override {
    if (partitions.size() < 2) return Status::ok();
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, waitForDevice(context));
    std::vector<std::shared_ptr<KernelSet>> sets;
    std::vector<std::pair<const CompiledPartition*, KernelSet*>> work;
    for (const CompiledPartition* partition : partitions) {
      std::shared_ptr<KernelSet> kernels;
      {
        std::lock_guard lock(pendingMutex_);
        if (auto it = pending_.find(partition->name); it != pending_.end()) kernels = it->second;
      }
      if (!kernels) {
        KILN_ASSIGN_OR_RETURN(kernels, recreateKernels(*partition));
      }
      work.emplace_back(partition, kernels.get());
      sets.push_back(std::move(kernels));
    }
    KILN_RETURN_IF_ERROR(createPipelines(*device, work, context));
    std::lock_guard lock(pendingMutex_);
    for (size_t i = 0; i < work.size(); ++i) pending_[work[i].first->name] = std::move(sets[i]);
    return Status::ok();
  }

  Result<std::unique_ptr<PartitionExecutable>> load(const CompiledPartition& partition,
                                                    const CompileContext& context) override {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, waitForDevice(context));
    std::shared_ptr<KernelSet> kernels;
    {
      std::lock_guard lock(pendingMutex_);
      if (auto tuned = tunedExecutables_.find(partition.name); tuned != tunedExecutables_.end()) {
        std::unique_ptr<PartitionExecutable> executable = std::move(tuned->second);
        tunedExecutables_.erase(tuned);
        return executable;
      }
      auto it = pending_.find(partition.name);
      if (it != pending_.end()) {
        kernels = it->second;
        pending_.erase(it);
      }
    }
    if (!kernels) {
      KILN_ASSIGN_OR_RETURN(kernels, recreateKernels(partition));
    }
    if (kernels->derivedConstants > 0 && !kernels->derivedReported) {  // a weightless binary's re-derived constants
      if (context.timings) context.timings->weight_prepack_ms += kernels->deriveMs;
      if (context.counters) context.counters->weights_prepacked += kernels->derivedConstants;
      kernels->derivedReported = true;
    }
    if (!kernels->pipelinesReady) {
      const std::pair<const CompiledPartition*, KernelSet*> only{&partition, kernels.get()};
      KILN_RETURN_IF_ERROR(createPipelines(*device, {&only, 1}, context));
    }
    double uploadMs = 0;
    KILN_ASSIGN_OR_RETURN(auto executable,
                          VulkanPartitionExecutable::create(device, partition.graph, partition.inputs, partition.outputs,
                                                            std::move(kernels->steps), &uploadMs, profile_,
                                                            autotune_ ? context.timings : nullptr));
    if (context.timings) context.timings->weight_upload_ms += uploadMs;
    return std::unique_ptr<PartitionExecutable>(std::move(executable));
  }

 private:
  // Autotune during compile (kiln.vulkan.autotune=1): the partition runs once on zeros of its fixed input shapes,
  // every kernel with candidates timing them (autotune_ms is the whole run); the choices go into
  // compiled.tuning, which a context binary stores, and compiled.spirv keeps only the chosen variants. The tuned
  // executable is what load() returns (`kernels` becomes null). Without a live target (a cross-compile), with
  // an input shape that is not fixed, or when the run fails, the note says why: the kernels keep their defaults
  // (with unfixed shapes they still tune on the first run, as before, but nothing is stored).
  Status tuneAtCompile(CompiledPartition& compiled, std::shared_ptr<KernelSet>& kernels, const CompileContext& context) {
    PartitionTuning& tuning = compiled.tuning;
    tuning.requested = true;
    if (targetIsProfile_) {
      tuning.note = "cross-compiled for the device profile of " + target_.name +
                    ": kernels keep their defaults (timings on this machine would not apply)";
      log::info("autotune {}: {}", compiled.name, tuning.note);
      return Status::ok();
    }
    const bool anyCandidates =
        std::any_of(kernels->steps.begin(), kernels->steps.end(),
                    [](const PartitionStep& step) { return step.kernel && step.kernel->candidateCount() > 1; });
    if (!anyCandidates) {
      tuning.note = "no kernel of this partition has candidate configurations";
      return Status::ok();
    }
    std::vector<Tensor> inputs;
    const std::map<std::string, int64_t> dims = fixedDims(context.model);
    for (const auto& in : compiled.graph->inputs) {
      Shape shape;
      bool fixed = in.shape.has_value() && in.dtype != DataType::UNDEFINED && in.dtype != DataType::STRING;
      if (auto given = givenShapes_.find(in.name); fixed && given != givenShapes_.end()) {
        shape = given->second;
      }
      for (size_t d = 0; fixed && shape.size() != in.shape->size() && d < in.shape->size(); ++d) {
        const auto& dim = (*in.shape)[d];
        const auto named = dim.param.empty() ? dims.end() : dims.find(dim.param);
        fixed = dim.isFixed() || named != dims.end();
        if (fixed) shape.push_back(dim.isFixed() ? dim.value : named->second);
      }
      if (!fixed) {
        tuning.note = "input '" + in.name + "' has no fixed shape (give its shape, or set kiln.free_dim_override.*): "
                      "tuned at the first run instead, and not stored";
        log::warn("autotune {}: {}", compiled.name, tuning.note);
        return Status::ok();
      }
      inputs.emplace_back(in.dtype, shape);
    }
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, waitForDevice(context));
    const std::pair<const CompiledPartition*, KernelSet*> only{&compiled, kernels.get()};
    KILN_RETURN_IF_ERROR(createPipelines(*device, {&only, 1}, context));
    double uploadMs = 0;
    KILN_ASSIGN_OR_RETURN(auto executable,
                          VulkanPartitionExecutable::create(device, compiled.graph, compiled.inputs, compiled.outputs,
                                                            std::move(kernels->steps), &uploadMs, profile_, nullptr));
    kernels.reset();
    if (context.timings) context.timings->weight_upload_ms += uploadMs;
    // Progress kernel by kernel, and a cancel honoured between kernels (a big model tunes for minutes).
    executable->setTuningObserver([&](size_t tuned, size_t toTune, const std::string&) {
      if (!context.progress) return Status::ok();
      context.progress->report(ProgressStep::AUTOTUNE, static_cast<int64_t>(tuned), static_cast<int64_t>(toTune),
                               compiled.name);
      if (context.progress->cancelled()) return Status(StatusCode::CANCELLED, "autotune of " + compiled.name + " cancelled");
      return Status::ok();
    });
    Stopwatch clock;
    auto ran = executable->run(inputs);
    executable->setTuningObserver(nullptr);
    if (context.timings) context.timings->autotune_ms += clock.elapsedMs();
    if (!ran.isOk() && ran.status().code() == StatusCode::CANCELLED) return ran.status();
    if (context.progress) {
      const auto tuned = static_cast<int64_t>(executable->tunedKernels().size());
      context.progress->report(ProgressStep::AUTOTUNE, tuned, tuned, compiled.name);
    }
    if (!ran.isOk()) {
      // The executable may hold half-tuned kernels: load() recreates them with their defaults.
      tuning.note = "the tuning run failed (" + ran.status().message() + "): kernels keep their defaults";
      log::warn("autotune {}: {}", compiled.name, tuning.note);
      KILN_ASSIGN_OR_RETURN(kernels, recreateKernels(compiled));
      return Status::ok();
    }
    tuning.kernels = executable->tunedKernels();
    // The binary carries only the SPIR-V the chosen candidates (and the untuned kernels) dispatch.
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<KernelSet> chosen, recreateKernels(compiled));
    std::set<std::string> used;
    for (const auto& step : chosen->steps) {
      if (!step.kernel) continue;
      for (const auto& variant : step.kernel->shaders()) used.insert(variant.key());
    }
    std::erase_if(compiled.spirv, [&](const auto& entry) { return used.count(entry.first) == 0; });
    compiled.pipelineUsers = pipelineUsersOf(*chosen);
    std::lock_guard lock(pendingMutex_);
    tunedExecutables_[compiled.name] = std::move(executable);
    return Status::ok();
  }

  // dim_param -> size: kiln.free_dim_override values, and the dimensions the given input shapes fix.
  std::map<std::string, int64_t> fixedDims(const ir::Model& model) const {
    std::map<std::string, int64_t> dims = freeDims_;
    if (!model.graph) return dims;
    for (const auto& input : model.graph->inputs) {
      auto given = givenShapes_.find(input.name);
      if (given == givenShapes_.end() || !input.shape || input.shape->size() != given->second.size()) continue;
      for (size_t d = 0; d < given->second.size(); ++d) {
        if (!(*input.shape)[d].param.empty()) dims.emplace((*input.shape)[d].param, given->second[d]);
      }
    }
    return dims;
  }

  // Kernels of a stored partition (from a context binary), chosen as they were for its target device, with the
  // constants and the autotune choices it stored: no placement, fusion, prepacking, glslang or tuning.
  Result<std::shared_ptr<KernelSet>> recreateKernels(const CompiledPartition& partition) const {
    if (partition.nodes.size() != partition.graph->nodes.size()) {
      return Status(StatusCode::INVALID_GRAPH, "compiled partition " + partition.name + " stores " +
                                                   std::to_string(partition.nodes.size()) + " node records for " +
                                                   std::to_string(partition.graph->nodes.size()) + " nodes");
    }
    DeviceInfo target = target_;
    if (!partition.targetProfile.empty() && partition.targetProfile != targetProfile_) {
      KILN_ASSIGN_OR_RETURN(target, parseDeviceProfile(partition.targetProfile, "compiled partition " + partition.name));
    }
    ir::Model opsets;
    opsets.opsetImports = partition.opsets;
    std::vector<bool> onHost;
    for (const auto& node : partition.nodes) onHost.push_back(node.onHost);
    KILN_ASSIGN_OR_RETURN(const std::vector<std::string> tuned,
                          tunedChoices(partition.tuning, partition.nodes.size(), partition.name));
    KILN_ASSIGN_OR_RETURN(KernelSet kernels,
                          createKernels(*partition.graph, opsets, target, *host_, onHost, &partition.nodes, false,
                                        &tuned));
    return std::make_shared<KernelSet>(std::move(kernels));
  }

  // A cache is only an optimization: a pipeline whose creation failed (SPIR-V from a pipeline cache file or a
  // context binary the driver refuses, a driver blob that breaks vkCreateComputePipelines) is built again cold,
  // from SPIR-V glslang compiles now and without the VkPipelineCache: a warning and pipeline_cache_fallbacks, not
  // an error. `result` becomes the retry's; the original error stays when the cold build fails too.
  static Status rebuildCold(Device& device, const ShaderVariant& variant, Result<const Pipeline*>& result,
                           PipelineRegistry::Stats& stats, const CompileContext& context) {
    if (result.status().code() == StatusCode::CANCELLED) return result.status();
    auto fresh = compileShader(variant, device.info());
    if (!fresh.isOk()) return result.status();
    auto retried = device.pipelines().get(variant, fresh->words, &stats, true);
    if (!retried.isOk()) return result.status();
    log::warn("{}; rebuilt without the pipeline cache (a cache is only an optimization)", result.status().message());
    if (context.counters) context.counters->pipeline_cache_fallbacks++;
    result = std::move(retried);
    return Status::ok();
  }

  // The pipelines of every step of `sets`, created on up to hardware_concurrency threads (each
  // vkCreateComputePipelines is independent and the driver's VkPipelineCache is internally synchronized; on
  // lavapipe this is most of a cached load). Variants shared by several steps or partitions, or already in the
  // device's registry, are created once. pipeline_create_ms is the wall time of the stage.
  static Status createPipelines(Device& device, std::span<const std::pair<const CompiledPartition*, KernelSet*>> sets,
                                const CompileContext& context) {
    std::map<std::string, std::pair<const ShaderVariant*, const std::vector<uint32_t>*>> unique;
    for (const auto& [partition, kernels] : sets) {
      for (const auto& step : kernels->steps) {
        if (!step.kernel) continue;
        for (const auto& variant : step.kernel->shaders()) {
          auto module = partition->spirv.find(variant.key());
          if (module == partition->spirv.end()) {
            return Status(StatusCode::INVALID_GRAPH,
                          "compiled partition " + partition->name + " lacks SPIR-V for " + variant.key());
          }
          unique.emplace(variant.key(), std::make_pair(&variant, &module->second));
        }
      }
    }
    std::vector<const std::pair<const ShaderVariant*, const std::vector<uint32_t>*>*> work;
    for (const auto& [key, item] : unique) work.push_back(&item);
    const std::string subject = sets.size() == 1 ? sets.front().first->name : std::to_string(sets.size()) + " partitions";
    const std::string stage = subject + ": pipelines";
    std::vector<std::optional<Result<const Pipeline*>>> results(work.size());
    std::vector<PipelineRegistry::Stats> stats(work.size());
    Stopwatch clock;
    runParallel(
        work.size(),
        [&](size_t i) {
          results[i] = context.progress && context.progress->cancelled()
                           ? Result<const Pipeline*>(Status(StatusCode::CANCELLED, stage + " cancelled"))
                           : device.pipelines().get(*work[i]->first, *work[i]->second, &stats[i]);
        },
        [&](size_t done) {
          if (context.progress) {
            context.progress->report(ProgressStep::PIPELINES, static_cast<int64_t>(done),
                                     static_cast<int64_t>(work.size()), subject);
          }
        });
    if (context.timings) context.timings->pipeline_create_ms += clock.elapsedMs();
    std::map<std::string, const Pipeline*> byKey;
    for (size_t i = 0; i < work.size(); ++i) {
      if (!results[i]->isOk()) KILN_RETURN_IF_ERROR(rebuildCold(device, *work[i]->first, *results[i], stats[i], context));
      if (context.counters && stats[i].created) context.counters->pipelines_created++;
      byKey.emplace(work[i]->first->key(), results[i]->value());
    }
    for (const auto& [partition, kernels] : sets) {
      for (auto& step : kernels->steps) {
        if (!step.kernel) continue;
        for (const auto& variant : step.kernel->shaders()) step.pipelines.push_back(byKey.at(variant.key()));
      }
      kernels->pipelinesReady = true;
    }
    return Status::ok();
  }

  Result<std::shared_ptr<Device>> waitForDevice(const CompileContext& context) {
    const Result<std::shared_ptr<Device>>& device = deviceFuture_.get();
    if (!device.isOk()) return device.status();
    if (!deviceTimeReported_ && context.timings) {
      context.timings->device_create_ms += device.value()->claimCreateMs();
      deviceTimeReported_ = true;
    }
    if (!driverCacheAttached_) {
      // Before the first pipeline of this session is created (load waits for the device first). Every device
      // gets a VkPipelineCache, seeded from the pipeline cache file when there is one: its data is what the file
      // and context binaries compiled here store.
      driverCacheAttached_ = true;
      const std::vector<std::byte> blob = cacheFile_ ? cacheFile_->driverBlob() : std::vector<std::byte>();
      if (Status attached = device.value()->pipelines().attachDriverCache(blob); !attached.isOk()) {
        log::warn("driver pipeline cache: {}", attached.message());
      }
    }
    return device.value();
  }

  // Writes the pipeline cache file when this EP added SPIR-V or the driver's blob changed; never fails.
  void saveCacheFile() {
    if (!cacheFile_ || !driverCacheAttached_) return;  // no file, or no device was ever used
    const Result<std::shared_ptr<Device>>& device = deviceFuture_.get();
    if (!device.isOk()) return;
    auto blob = device.value()->pipelines().driverCacheData();
    if (!blob.isOk()) log::info("pipeline cache {}: no driver blob: {}", cacheFile_->path(), blob.status().message());
    const std::vector<std::byte> driverBlob = blob.isOk() ? std::move(blob).value() : std::vector<std::byte>();
    if (!cacheFile_->needsSave(driverBlob)) return;
    if (Status saved = cacheFile_->save(driverBlob); !saved.isOk()) log::warn("{}", saved.message());
  }

  const std::string name_ = kVulkanExecutionProviderName;
  // What fixes input shapes for autotune at compile (VulkanEpConfig::inputShapes, freeDims).
  std::map<std::string, std::vector<int64_t>> givenShapes_;
  std::map<std::string, int64_t> freeDims_;
  DeviceInfo target_;
  bool targetIsProfile_ = false;
  std::string targetProfile_;
  std::shared_future<Result<std::shared_ptr<Device>>> deviceFuture_;
  bool deviceTimeReported_ = false;
  bool profile_ = false;
  bool autotune_ = false;
  bool fp16_ = false;
  std::mutex pendingMutex_;
  std::map<std::string, std::shared_ptr<KernelSet>> pending_;
  std::map<std::string, std::unique_ptr<PartitionExecutable>> tunedExecutables_;  // tuned by compile, for load
  std::shared_ptr<PipelineCacheFile> cacheFile_;  // kiln.vulkan.pipeline_cache_path, else null
  bool driverCacheAttached_ = false;               // its driver blob went to the device's VkPipelineCache
  std::shared_ptr<const HostEvaluator> host_;
};

}  // namespace

Result<std::unique_ptr<ExecutionProvider>> createVulkanExecutionProvider(const VulkanEpConfig& config,
                                                                         bool explicitlyRequested,
                                                                         std::shared_ptr<const HostEvaluator> host) {
  if (!host) return Status(StatusCode::INVALID_ARGUMENT, "the Vulkan EP needs a host evaluator for shape arithmetic");
  // A target profile replaces the live device for kernel choice and SPIR-V: a machine without the device (or
  // without any Vulkan device) compiles for it; loading still needs a live device.
  const std::string& targetProfile = config.targetProfile;
  std::optional<DeviceInfo> target;
  if (!targetProfile.empty()) {
    auto read = readDeviceProfile(targetProfile);
    if (!read.isOk()) return read.status().withContext("kiln.vulkan.target_profile");
    target = std::move(read).value();
  }
  const std::string& selector = config.device;
  auto picked = selectDevice(selector, explicitlyRequested || target.has_value());
  std::shared_future<Result<std::shared_ptr<Device>>> device;
  if (picked.isOk()) {
    // Logical-device creation runs beside model loading; compile() waits for it.
    device = std::async(std::launch::async, [index = picked.value().index] { return Device::acquire(index); }).share();
  } else if (target && selector.empty()) {
    std::promise<Result<std::shared_ptr<Device>>> none;
    none.set_value(picked.status().withContext("no Vulkan device to load the partitions compiled for " + target->name));
    device = none.get_future().share();
  } else {
    if (explicitlyRequested || !selector.empty()) return picked.status();
    log::debug("Vulkan EP not used: {}", picked.status().message());
    return std::unique_ptr<ExecutionProvider>();
  }
  const bool profile = config.profile;
  const bool autotune = config.autotune;
  // Off unless set (an empty value is unset too); the file is read now, beside device creation.
  std::shared_ptr<PipelineCacheFile> cacheFile;
  // It records the live device's environment, so a cross-compile for a profile does not use it.
  const std::string& cachePath = config.pipelineCachePath;
  if (!cachePath.empty() && !target && picked.isOk()) cacheFile = PipelineCacheFile::open(cachePath, picked.value());
  // Without 16-bit storage no kernel claims float16, so kiln.vulkan.fp16=1 leaves every tensor float32.
  const DeviceInfo& fp16Target = target ? *target : picked.value();
  if (config.fp16 && !fp16Target.storageBuffer16Bit) {
    log::warn("kiln.vulkan.fp16=1: {} lacks storageBuffer16BitAccess; tensors stay float32", fp16Target.name);
  }
  return std::unique_ptr<ExecutionProvider>(new VulkanExecutionProvider(
      target ? *target : picked.value(), target.has_value(), std::move(device), profile, autotune, config.fp16,
      std::move(cacheFile), std::move(host), config.inputShapes, config.freeDims));
}

}  // namespace kiln::vk
