#include "ep/vulkan/partition_executable.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ep/vulkan/device_tensor.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::vk {
namespace {

std::shared_ptr<DeviceStorage> wrap(MemoryAllocator& allocator, BufferRange range) {
  auto storage = std::make_shared<DeviceStorage>();
  storage->allocator = &allocator;
  storage->range = range;
  return storage;
}

uint64_t deviceBytes(DataType dtype, const Shape& shape) {
  return static_cast<uint64_t>(shapeSize(shape)) * dataTypeSize(dtype);
}

// Shape and Size need only the shape of their input, which may live on the device only.
Tensor shapeOnlyResult(const ir::Node& node, const Shape& shape) {
  if (node.opType == "Size") return Tensor::fromVector<int64_t>({}, {shapeSize(shape)});
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t begin = clamp(node.attrInt("start", 0));
  const int64_t end = std::max(begin, node.hasAttribute("end") ? clamp(node.attrInt("end", 0)) : rank);
  return Tensor::fromVector<int64_t>({end - begin}, std::vector<int64_t>(shape.begin() + begin, shape.begin() + end));
}

// The RecordContext of one run: value slots, pending uploads and downloads, the command stream.
class RunRecorder final : public RecordContext {
 public:
  RunRecorder(Device& device, CommandStream& stream, std::vector<VkTensor>& frame,
              std::atomic<uint64_t>* uploaded = nullptr)
      : device_(device), stream_(stream), frame_(frame), uploaded_(uploaded) {}

  void bind(const PartitionStep& step, const std::vector<int>& inputs, const std::vector<int>& outputs) {
    step_ = &step;
    inputs_ = &inputs;
    outputs_ = &outputs;
  }

  const DeviceInfo& device() const override { return device_.info(); }
  size_t inputCount() const override { return inputs_->size(); }
  const VkTensor* input(size_t i) const override {
    if (i >= inputs_->size() || (*inputs_)[i] < 0) return nullptr;
    return &frame_[static_cast<size_t>((*inputs_)[i])];
  }
  Result<const VkTensor*> deviceInput(size_t i) override {
    if (i >= inputs_->size() || (*inputs_)[i] < 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "input " + std::to_string(i) + " of " + step_->node->label() + " is absent");
    }
    VkTensor& value = frame_[static_cast<size_t>((*inputs_)[i])];
    if (!value.onDevice()) KILN_RETURN_IF_ERROR(upload(value));
    return &value;
  }
  const VkTensor& constant(uint32_t k) const override { return step_->constants.at(k); }
  size_t outputCount() const override { return outputs_->size(); }

  Result<const VkTensor*> allocateOutput(size_t i, DataType dtype, Shape shape) override {
    KILN_ASSIGN_OR_RETURN(VkTensor * out, outputSlot(i));
    KILN_ASSIGN_OR_RETURN(BufferRange range, device_.allocator().allocateDevice(deviceBytes(dtype, shape)));
    out->dtype = dtype;
    out->shape = std::move(shape);
    out->storage = wrap(device_.allocator(), range);
    out->host.reset();
    return out;
  }
  Status aliasOutput(size_t i, size_t from, Shape shape) override {
    const VkTensor* source = input(from);
    if (!source) return Status(StatusCode::INVALID_ARGUMENT, "alias of an absent input in " + step_->node->label());
    if (shapeSize(shape) != source->elementCount()) {
      return Status(StatusCode::INVALID_ARGUMENT, step_->node->label() + ": cannot view " + shapeToString(source->shape) +
                                                      " as " + shapeToString(shape));
    }
    VkTensor copy = *source;
    copy.shape = shape;
    if (copy.host) copy.host = copy.host->reshaped(shape);
    KILN_ASSIGN_OR_RETURN(VkTensor * out, outputSlot(i));
    *out = std::move(copy);
    return Status::ok();
  }
  Status setHostOutput(size_t i, Tensor value) override {
    KILN_ASSIGN_OR_RETURN(VkTensor * out, outputSlot(i));
    out->dtype = value.dtype();
    out->shape = value.shape();
    out->storage.reset();
    out->host = std::move(value);
    return Status::ok();
  }
  Result<BufferRange> scratch(uint64_t bytes) override {
    KILN_ASSIGN_OR_RETURN(BufferRange range, device_.allocator().allocateDevice(bytes));
    keepAlive_.push_back(wrap(device_.allocator(), range));
    return range;
  }
  Status dispatch(uint32_t shaderIndex, std::span<const BufferRange> buffers, const void* push, size_t pushBytes,
                  std::array<uint32_t, 3> groups) override {
    if (shaderIndex >= step_->pipelines.size()) {
      return Status(StatusCode::FAIL, step_->node->label() + ": dispatch of unknown shader " + std::to_string(shaderIndex));
    }
    const Pipeline& pipeline = *step_->pipelines[shaderIndex];
    if (buffers.size() != pipeline.bindings || pushBytes > kPushConstantBytes) {
      return Status(StatusCode::FAIL, step_->node->label() + ": dispatch of " + pipeline.key + " with " +
                                          std::to_string(buffers.size()) + " buffers / " + std::to_string(pushBytes) +
                                          " push bytes");
    }
    for (int d = 0; d < 3; ++d) {
      if (groups[d] > device_.info().maxComputeWorkGroupCount[d]) {
        return Status(StatusCode::EP_FAIL, step_->node->label() + ": " + std::to_string(groups[d]) +
                                               " workgroups exceed the device limit in dimension " + std::to_string(d));
      }
    }
    stream_.dispatch(pipeline, buffers, push, pushBytes, groups);
    return Status::ok();
  }
  Status copy(const BufferRange& from, const BufferRange& to, uint64_t bytes) override {
    stream_.copy(from, to, bytes);
    return Status::ok();
  }

  // Host data → new device storage, through a staging range written now and copied when the stream runs
  // (a device range written now could still be read by earlier commands of this run).
  Status upload(VkTensor& value) {
    if (!value.host) return Status(StatusCode::FAIL, "value without host data or device storage");
    const Tensor& host = *value.host;
    if (host.dtype() == DataType::STRING) {
      return Status(StatusCode::NOT_IMPLEMENTED, "string tensors cannot be used by Vulkan kernels");
    }
    const uint64_t bytes = host.byteSize();
    KILN_ASSIGN_OR_RETURN(BufferRange staging, device_.allocator().allocateStaging(bytes));
    keepAlive_.push_back(wrap(device_.allocator(), staging));
    if (bytes) std::memcpy(staging.mapped, host.rawData(), bytes);
    KILN_ASSIGN_OR_RETURN(BufferRange range, device_.allocator().allocateDevice(bytes));
    value.storage = wrap(device_.allocator(), range);
    stream_.copy(staging, range, bytes);
    if (uploaded_) uploaded_->fetch_add(bytes);
    return Status::ok();
  }

  // Device value → host tensor after the stream ran. Records the staging copy now when memory is not mappable.
  Status prepareDownload(const VkTensor& value, BufferRange* staging) {
    if (device_.allocator().deviceMemoryMappable()) return Status::ok();
    const uint64_t bytes = deviceBytes(value.dtype, value.shape);
    KILN_ASSIGN_OR_RETURN(*staging, device_.allocator().allocateStaging(bytes));
    keepAlive_.push_back(wrap(device_.allocator(), *staging));
    stream_.copy(value.range(), *staging, bytes);
    return Status::ok();
  }

 private:
  Result<VkTensor*> outputSlot(size_t i) {
    if (i >= outputs_->size()) {
      return Status(StatusCode::FAIL, step_->node->label() + " has no output " + std::to_string(i));
    }
    if ((*outputs_)[i] < 0) return &discard_;
    return &frame_[static_cast<size_t>((*outputs_)[i])];
  }

  Device& device_;
  CommandStream& stream_;
  std::vector<VkTensor>& frame_;
  const PartitionStep* step_ = nullptr;
  const std::vector<int>* inputs_ = nullptr;
  const std::vector<int>* outputs_ = nullptr;
  VkTensor discard_;
  std::vector<std::shared_ptr<DeviceStorage>> keepAlive_;
  std::atomic<uint64_t>* uploaded_;
};

}  // namespace

Result<VkTensor> uploadNow(Device& device, const Tensor& tensor) {
  std::lock_guard deviceLock(device.memoryUseMutex());  // a range a running session released is not free yet
  VkTensor value;
  value.dtype = tensor.dtype();
  value.shape = tensor.shape();
  value.host = tensor;
  const uint64_t bytes = tensor.byteSize();
  KILN_ASSIGN_OR_RETURN(BufferRange range, device.allocator().allocateDevice(bytes));
  value.storage = wrap(device.allocator(), range);
  if (range.mapped) {
    if (bytes) std::memcpy(range.mapped, tensor.rawData(), bytes);
    return value;
  }
  KILN_ASSIGN_OR_RETURN(BufferRange staging, device.allocator().allocateStaging(bytes));
  auto stagingOwner = wrap(device.allocator(), staging);
  if (bytes) std::memcpy(staging.mapped, tensor.rawData(), bytes);
  KILN_ASSIGN_OR_RETURN(auto stream, CommandStream::create(std::shared_ptr<Device>(&device, [](Device*) {})));
  KILN_RETURN_IF_ERROR(stream->begin());
  stream->copy(staging, range, bytes);
  KILN_RETURN_IF_ERROR(stream->submitAndWait());
  return value;
}

Result<std::unique_ptr<VulkanPartitionExecutable>> VulkanPartitionExecutable::create(
    std::shared_ptr<Device> device, std::shared_ptr<const ir::Graph> graph, std::vector<std::string> inputs,
    std::vector<std::string> outputs, std::vector<PartitionStep> steps, double* weightUploadMs, bool profile,
    SessionTimings* autotuneTimings) {
  std::unique_ptr<VulkanPartitionExecutable> exe(new VulkanPartitionExecutable());
  exe->device_ = std::move(device);
  exe->graph_ = std::move(graph);
  exe->inputNames_ = std::move(inputs);
  exe->outputNames_ = std::move(outputs);
  exe->steps_ = std::move(steps);
  exe->profile_ = profile && exe->device_->info().timestampQueries;
  exe->autotuneTimings_ = autotuneTimings;
  for (const auto& step : exe->steps_) exe->kernelsToTune_ += step.kernel && step.kernel->candidateCount() > 1 ? 1 : 0;
  exe->autotune_ = exe->kernelsToTune_ > 0;
  KILN_RETURN_IF_ERROR(exe->build(weightUploadMs));
  if (exe->profile_) KILN_RETURN_IF_ERROR(exe->stream_->enableTimestamps(static_cast<uint32_t>(2 * exe->steps_.size() + 2)));
  return exe;
}

Status VulkanPartitionExecutable::build(double* weightUploadMs) {
  std::unordered_map<std::string, int> slots;
  auto slotFor = [&](const std::string& name) {
    auto [it, inserted] = slots.emplace(name, static_cast<int>(frameTemplate_.size()));
    if (inserted) frameTemplate_.emplace_back();
    return it->second;
  };
  for (const auto& name : inputNames_) inputSlots_.push_back(slotFor(name));

  // Initializers read by device kernels are uploaded once (not those a kernel folded into its constants); every
  // initializer keeps its host copy for host nodes and kernels that read parameters on the CPU.
  std::unordered_set<std::string> deviceRead;
  for (const auto& step : steps_) {
    if (!step.kernel) continue;
    const auto& absorbed = step.kernel->absorbedInputs();
    for (size_t i = 0; i < step.node->inputs.size(); ++i) {
      if (std::find(absorbed.begin(), absorbed.end(), i) == absorbed.end()) deviceRead.insert(step.node->inputs[i]);
    }
  }
  Stopwatch uploadClock;
  for (const auto& [name, tensor] : graph_->initializers) {
    VkTensor& value = frameTemplate_[static_cast<size_t>(slotFor(name))];
    const bool unloaded = tensor.dtype() != DataType::STRING && tensor.rawData() == nullptr && tensor.numel() > 0;
    if (deviceRead.count(name) && unloaded) {  // deferred by a compile (onnx_io::isDeferred): nothing to upload
      unloadedWeights_.push_back(name);
      value.dtype = tensor.dtype();
      value.shape = tensor.shape();
      value.host = tensor;
    } else if (deviceRead.count(name) && tensor.dtype() != DataType::STRING) {
      KILN_ASSIGN_OR_RETURN(value, uploadNow(*device_, tensor));
    } else {
      value.dtype = tensor.dtype();
      value.shape = tensor.shape();
      value.host = tensor;
    }
  }
  for (auto& step : steps_) {
    if (!step.kernel) continue;
    for (const auto& constant : step.kernel->constants()) {
      KILN_ASSIGN_OR_RETURN(VkTensor value, uploadNow(*device_, constant));
      step.constants.push_back(std::move(value));
    }
  }
  if (weightUploadMs) *weightUploadMs += uploadClock.elapsedMs();

  std::unordered_map<int, size_t> lastUse;
  for (size_t s = 0; s < steps_.size(); ++s) {
    Slotted slotted;
    for (const auto& in : steps_[s].node->inputs) {
      const int slot = in.empty() ? -1 : slotFor(in);
      slotted.inputs.push_back(slot);
      if (slot >= 0) lastUse[slot] = s;
    }
    for (const auto& out : steps_[s].node->outputs) slotted.outputs.push_back(out.empty() ? -1 : slotFor(out));
    const bool shapeOnly = steps_[s].node->opType == "Shape" || steps_[s].node->opType == "Size";  // see runLocked
    if (steps_[s].hostKernel && !shapeOnly) {
      for (int slot : slotted.inputs) {
        if (slot >= 0) hostReadSlots_.insert(slot);
      }
    }
    slots_.push_back(std::move(slotted));
  }
  for (const auto& name : outputNames_) outputSlots_.push_back(slotFor(name));
  std::unordered_set<int> keep(outputSlots_.begin(), outputSlots_.end());
  for (const auto& [name, tensor] : graph_->initializers) keep.insert(slots.at(name));
  for (const auto& [slot, step] : lastUse) {
    if (!keep.count(slot)) slots_[step].release.push_back(slot);
  }
  KILN_ASSIGN_OR_RETURN(stream_, CommandStream::create(device_));
  return Status::ok();
}

Status VulkanPartitionExecutable::autotuneStep(size_t s, const std::vector<VkTensor>& frame) {
  Stopwatch total;
  if (!tuneStream_) {
    KILN_ASSIGN_OR_RETURN(tuneStream_, CommandStream::create(device_));
  }
  VkKernel& kernel = *steps_[s].kernel;
  size_t best = 0;
  double bestMs = 0;
  std::string trials;
  TunedKernel record{s, steps_[s].node->label(), {}, {}};
  for (size_t c = 0; c < kernel.candidateCount(); ++c) {
    kernel.selectCandidate(c);
    double fastest = 0;
    for (int repeat = 0; repeat < 3; ++repeat) {  // the first includes lavapipe's JIT compile; keep the best
      std::vector<VkTensor> scratch = frame;
      RunRecorder trial(*device_, *tuneStream_, scratch);
      trial.bind(steps_[s], slots_[s].inputs, slots_[s].outputs);
      KILN_RETURN_IF_ERROR(tuneStream_->begin());
      KILN_RETURN_IF_ERROR(kernel.record(trial).withContext("autotuning " + steps_[s].node->label()));
      Stopwatch clock;
      KILN_RETURN_IF_ERROR(tuneStream_->submitAndWait());
      const double ms = clock.elapsedMs();
      fastest = repeat == 0 ? ms : std::min(fastest, ms);
    }
    trials += " " + kernel.candidateName(c) + "=" + std::to_string(fastest).substr(0, 6) + "ms";
    record.trials.emplace_back(kernel.candidateName(c), fastest);
    if (c == 0 || fastest < bestMs) best = c, bestMs = fastest;
  }
  kernel.selectCandidate(best);
  log::info("autotune {}: {} ->{}", steps_[s].node->label(), kernel.candidateName(best), trials);
  record.chosen = kernel.candidateName(best);
  tuned_.push_back(std::move(record));
  if (autotuneTimings_) autotuneTimings_->autotune_ms += total.elapsedMs();
  return Status::ok();
}

void VulkanPartitionExecutable::reportProfile(const std::vector<std::pair<size_t, int>>& marks) {
  lastNodeDeviceTimes_.clear();
  if (marks.size() < 2 || marks.back().second < 0) return;
  const std::vector<uint64_t> ns = stream_->readTimestamps(static_cast<uint32_t>(marks.back().second + 1));
  std::map<std::string, std::pair<double, int>> byOp;  // op type -> (ms, nodes)
  double total = 0;
  const uint64_t origin = ns[static_cast<size_t>(std::max(0, marks.front().second))];
  for (size_t m = 0; m + 1 < marks.size(); ++m) {
    if (marks[m].second < 0 || marks[m + 1].second < 0) continue;
    const double ms = static_cast<double>(ns[static_cast<size_t>(marks[m + 1].second)] -
                                          ns[static_cast<size_t>(marks[m].second)]) / 1e6;
    const ir::Node& node = *steps_[marks[m].first].node;
    const double startMs = static_cast<double>(ns[static_cast<size_t>(marks[m].second)] - origin) / 1e6;
    lastNodeDeviceTimes_.push_back({node.label(), startMs, ms});
    auto& entry = byOp[node.opType];
    entry.first += ms;
    entry.second += 1;
    total += ms;
  }
  std::string table;
  for (const auto& [op, entry] : byOp) {
    char line[128];
    std::snprintf(line, sizeof line, "\n  %-22s %9.3f ms %5.1f%% %4d nodes", op.c_str(), entry.first,
                  total > 0 ? 100.0 * entry.first / total : 0.0, entry.second);
    table += line;
  }
  log::info("Vulkan profile of {} ({} dispatches, {:.3f} ms on the device):{}", graph_->name, stream_->dispatchCount(),
            total, table);
}

std::vector<DeviceNodeTime> VulkanPartitionExecutable::lastNodeDeviceTimes() const {
  std::lock_guard lock(runMutex_);
  return lastNodeDeviceTimes_;
}

std::vector<TunedKernel> VulkanPartitionExecutable::tunedKernels() const {
  std::lock_guard lock(runMutex_);
  return tuned_;
}

Result<std::vector<Tensor>> VulkanPartitionExecutable::run(std::span<const Tensor> inputs) {
  std::lock_guard lock(runMutex_);
  std::lock_guard deviceLock(device_->memoryUseMutex());  // see Device::memoryUseMutex()
  return runLocked(inputs, nullptr);
}

Result<std::vector<Tensor>> VulkanPartitionExecutable::runKeeping(std::span<const Tensor> inputs,
                                                                   const std::vector<bool>& keepOnDevice) {
  std::lock_guard lock(runMutex_);
  std::lock_guard deviceLock(device_->memoryUseMutex());
  return runLocked(inputs, &keepOnDevice);
}

Status VulkanPartitionExecutable::bindInput(VkTensor& value, const Tensor& input, int slot) {
  value.dtype = input.dtype();
  value.shape = input.shape();
  value.storage.reset();
  value.host.reset();
  if (!input.isOnDevice()) {
    value.host = input;
    return Status::ok();
  }
  value.storage = storageOn(*device_, input);
  if (value.storage && !hostReadSlots_.count(slot)) return Status::ok();  // read in place: no copy
  KILN_ASSIGN_OR_RETURN(Tensor host, input.toHost());  // another device's memory, or a host node reads it
  downloadedBytes_.fetch_add(host.byteSize());
  value.host = std::move(host);
  return Status::ok();
}

Result<std::vector<Tensor>> VulkanPartitionExecutable::runLocked(std::span<const Tensor> inputs,
                                                                  const std::vector<bool>* keepOnDevice) {
  if (!unloadedWeights_.empty()) {
    return Status(StatusCode::FAIL, "weight '" + unloadedWeights_.front() + "' of this partition stayed in its external-data "
                                    "file (a compile-only session): load the compiled model to run it");
  }
  if (inputs.size() != inputSlots_.size()) {
    return Status(StatusCode::FAIL, "Vulkan partition expects " + std::to_string(inputSlots_.size()) + " inputs, got " +
                                        std::to_string(inputs.size()));
  }
  std::vector<VkTensor> frame = frameTemplate_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_RETURN_IF_ERROR(bindInput(frame[static_cast<size_t>(inputSlots_[i])], inputs[i], inputSlots_[i])
                             .withContext("input '" + inputNames_[i] + "'"));
  }
  auto kept = [&](size_t o) { return keepOnDevice && o < keepOnDevice->size() && (*keepOnDevice)[o]; };
  KILN_RETURN_IF_ERROR(stream_->begin());
  RunRecorder recorder(*device_, *stream_, frame, &uploadedBytes_);
  std::vector<std::pair<size_t, int>> marks;  // (step, timestamp index before it); closed by the next mark
  for (size_t s = 0; s < steps_.size(); ++s) {
    const PartitionStep& step = steps_[s];
    const Slotted& slotted = slots_[s];
    const bool shapeOnly = step.node->opType == "Shape" || step.node->opType == "Size";
    if (shapeOnly && !slotted.inputs.empty() && slotted.inputs[0] >= 0 && !slotted.outputs.empty() &&
        slotted.outputs[0] >= 0) {
      const VkTensor& in = frame[static_cast<size_t>(slotted.inputs[0])];
      VkTensor& out = frame[static_cast<size_t>(slotted.outputs[0])];
      out = VkTensor{};
      out.host = shapeOnlyResult(*step.node, in.shape);
      out.dtype = DataType::INT64;
      out.shape = out.host->shape();
    } else if (step.hostKernel) {
      std::vector<const Tensor*> hostInputs;
      for (int slot : slotted.inputs) {
        const VkTensor* value = slot < 0 ? nullptr : &frame[static_cast<size_t>(slot)];
        if (value && !value->host) {
          return Status(StatusCode::FAIL, "host node " + step.node->label() + " reads a value that is only on the device");
        }
        hostInputs.push_back(value ? &*value->host : nullptr);
      }
      std::vector<Tensor> produced(slotted.outputs.size());
      KILN_RETURN_IF_ERROR(step.hostKernel->compute(hostInputs, produced).withContext("evaluating " + step.node->label() + " on the host"));
      for (size_t o = 0; o < produced.size(); ++o) {
        if (slotted.outputs[o] < 0) continue;
        VkTensor& out = frame[static_cast<size_t>(slotted.outputs[o])];
        out.dtype = produced[o].dtype();
        out.shape = produced[o].shape();
        out.storage.reset();
        out.host = std::move(produced[o]);
      }
    } else {
      if (autotune_ && step.kernel->candidateCount() > 1) {
        if (tuningObserver_) KILN_RETURN_IF_ERROR(tuningObserver_(tuned_.size(), kernelsToTune_, step.node->label()));
        KILN_RETURN_IF_ERROR(autotuneStep(s, frame));
      }
      recorder.bind(step, slotted.inputs, slotted.outputs);
      if (profile_) marks.emplace_back(s, stream_->timestamp());
      KILN_RETURN_IF_ERROR(step.kernel->record(recorder).withContext("recording " + step.node->label()));
    }
    for (int slot : slotted.release) frame[static_cast<size_t>(slot)] = VkTensor{};
  }
  std::vector<BufferRange> staging(outputSlots_.size());
  for (size_t o = 0; o < outputSlots_.size(); ++o) {
    const VkTensor& value = frame[static_cast<size_t>(outputSlots_[o])];
    if (value.onDevice() && !value.host && !kept(o)) KILN_RETURN_IF_ERROR(recorder.prepareDownload(value, &staging[o]));
  }
  if (profile_) marks.emplace_back(steps_.size(), stream_->timestamp());
  autotune_ = false;  // tuned on this first run; the choices stay in the kernels
  KILN_RETURN_IF_ERROR(stream_->submitAndWait());
  if (profile_) reportProfile(marks);

  std::vector<Tensor> outputs;
  for (size_t o = 0; o < outputSlots_.size(); ++o) {
    const VkTensor& value = frame[static_cast<size_t>(outputSlots_[o])];
    if (value.onDevice() && kept(o)) {
      outputs.push_back(deviceTensor(device_, value));  // stays in device memory: no copy
    } else if (value.host) {
      outputs.push_back(*value.host);
    } else if (value.onDevice()) {
      Tensor tensor(value.dtype, value.shape);
      const void* source = staging[o].valid() ? staging[o].mapped : value.range().mapped;
      if (tensor.byteSize()) std::memcpy(tensor.rawData(), source, tensor.byteSize());
      downloadedBytes_.fetch_add(tensor.byteSize());
      outputs.push_back(std::move(tensor));
    } else {
      return Status(StatusCode::FAIL, "Vulkan partition output '" + outputNames_[o] + "' was not produced");
    }
  }
  return outputs;
}

}  // namespace kiln::vk
