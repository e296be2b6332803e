// The Vulkan EP's kernel interface. A kernel is created once per node at compile time (it names the shader
// variants it dispatches and may prepack constants); at run time `record` sees the actual input shapes, computes
// output shapes and records dispatches with the shapes in push constants. So one compiled partition runs every
// input shape the model allows.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "ep/vulkan/memory_allocator.h"
#include "ep/vulkan/shader_library.h"
#include "ep/vulkan/vulkan_device.h"
#include "ir/graph.h"
#include "kiln/tensor.h"

namespace kiln::vk {

// Device storage that returns to the allocator when the last reference (value, view, pending command) drops.
struct DeviceStorage {
  MemoryAllocator* allocator = nullptr;
  BufferRange range;
  ~DeviceStorage() {
    if (allocator && range.valid()) allocator->release(range);
  }
};

// A value inside a running Vulkan partition: on the device, on the host, or both.
struct VkTensor {
  DataType dtype = DataType::UNDEFINED;
  Shape shape;
  std::shared_ptr<DeviceStorage> storage;  // null while the value exists only on the host
  std::optional<Tensor> host;              // host copy (shape values, integer parameters, partition inputs)

  bool onDevice() const { return storage != nullptr; }
  int64_t elementCount() const { return shapeSize(shape); }
  // The device range (only when onDevice()).
  const BufferRange& range() const { return storage->range; }
};

// What a kernel can do while recording one run.
class RecordContext {
 public:
  virtual ~RecordContext() = default;
  virtual const DeviceInfo& device() const = 0;

  virtual size_t inputCount() const = 0;
  // The i-th input, or nullptr when omitted or out of range. May be host-only: use deviceInput to read it in a
  // shader, `host` to read it on the CPU (integer parameters such as Reshape's shape are always on the host).
  virtual const VkTensor* input(size_t i) const = 0;
  // The i-th input with device storage (uploading a host-only value). INVALID_ARGUMENT when omitted.
  virtual Result<const VkTensor*> deviceInput(size_t i) = 0;
  // The k-th constant this kernel registered with VkKernel::addConstant, on the device.
  virtual const VkTensor& constant(uint32_t k) const = 0;

  virtual size_t outputCount() const = 0;
  // Allocates device storage for output i (contents undefined until a dispatch writes them).
  virtual Result<const VkTensor*> allocateOutput(size_t i, DataType dtype, Shape shape) = 0;
  // Output i shares input `from`'s storage under a new shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
  virtual Status aliasOutput(size_t i, size_t from, Shape shape) = 0;
  // Output i is a host value (Shape, Size, and shape arithmetic); uploaded only if a device kernel reads it.
  virtual Status setHostOutput(size_t i, Tensor value) = 0;
  // Temporary device storage that lives until the run ends.
  virtual Result<BufferRange> scratch(uint64_t bytes) = 0;

  // Records a dispatch of the kernel's shader `shaderIndex` (see VkKernel::useShader) over `buffers` (bound to
  // bindings 0..n-1 in order) with `push` as push constants (<= kPushConstantBytes), followed by a barrier.
  // Group counts are clamped by the caller; a zero count records nothing.
  virtual Status dispatch(uint32_t shaderIndex, std::span<const BufferRange> buffers, const void* push,
                          size_t pushBytes, std::array<uint32_t, 3> groups) = 0;
  // Copies `bytes` between device ranges (followed by a barrier).
  virtual Status copy(const BufferRange& from, const BufferRange& to, uint64_t bytes) = 0;
};

struct KernelCreateInfo;

class VkKernel {
 public:
  virtual ~VkKernel() = default;
  virtual Status record(RecordContext& ctx) = 0;

  // Autotune (kiln.vulkan.autotune=1): a kernel with interchangeable configurations (tile shapes, workgroup
  // sizes) exposes them as candidates; the compile times each on the fixed input shapes (or, when they are not
  // fixed, the first run on its real shapes) and keeps the fastest. Kernels without candidates return 0. A kernel
  // registers its candidates through candidatesToRegister, so a context binary's stored choice (by name) comes
  // back alone. Names are stored in context binaries: keep them stable.
  virtual size_t candidateCount() const { return 0; }
  virtual void selectCandidate(size_t /*index*/) {}
  virtual std::string candidateName(size_t /*index*/) const { return {}; }

  // Variants this kernel may dispatch: compiled (glslang) and turned into pipelines before the first run.
  const std::vector<ShaderVariant>& shaders() const { return shaders_; }
  // Constants (prepacked weights, folded parameters) uploaded once when the partition loads.
  const std::vector<Tensor>& constants() const { return constants_; }
  // Inputs (by index) whose constant values this kernel folded into its constants and never reads at run time:
  // they are not uploaded, and a context binary stores only their type and shape.
  const std::vector<size_t>& absorbedInputs() const { return absorbed_; }

 protected:
  // Registers a variant; the returned index is what dispatch() takes.
  uint32_t useShader(ShaderVariant variant) {
    shaders_.push_back(std::move(variant));
    return static_cast<uint32_t>(shaders_.size() - 1);
  }
  // Registers a constant (prepacked weights, folded parameters) for upload at load; the returned index is what
  // RecordContext::constant() takes. `produce` runs only for a fresh compile: a kernel re-created from a context
  // binary takes the stored constant instead, so a cached load prepacks nothing.
  uint32_t addConstant(const KernelCreateInfo& info, const std::function<Tensor()>& produce);
  // Declares that input `i` is folded into the constants (see absorbedInputs).
  void absorbInput(size_t i) { absorbed_.push_back(i); }

 private:
  std::vector<ShaderVariant> shaders_;
  std::vector<Tensor> constants_;
  std::vector<size_t> absorbed_;
};

// What a kernel knows when it is created (compile time).
struct KernelCreateInfo {
  const ir::Node& node;
  int64_t opset = 0;
  const DeviceInfo& device;
  // Constant inputs (initializers) by input index; nullptr where the input is not constant or absent.
  std::vector<const Tensor*> constantInputs;
  // Declared/inferred type of each input and output (nullptr when unknown).
  std::vector<const ir::ValueInfo*> inputInfo, outputInfo;
  bool autotune = false;  // register every candidate configuration (kiln.vulkan.autotune=1)
  // The candidate a tuned context binary chose for this node (by candidateName); empty: none stored.
  std::string tunedCandidate{};
  // Constants stored by an earlier compile (loading from a context binary), in registration order; nullptr for a
  // fresh compile.
  const std::vector<Tensor>* storedConstants = nullptr;

  // The declared type of input i, else its constant's type (initializers carry no value info), else UNDEFINED.
  DataType inputType(size_t i) const {
    if (i < inputInfo.size() && inputInfo[i] && inputInfo[i]->dtype != DataType::UNDEFINED) return inputInfo[i]->dtype;
    return i < constantInputs.size() && constantInputs[i] ? constantInputs[i]->dtype() : DataType::UNDEFINED;
  }
};

inline uint32_t VkKernel::addConstant(const KernelCreateInfo& info, const std::function<Tensor()>& produce) {
  const size_t index = constants_.size();
  if (info.storedConstants) {
    // A count mismatch leaves an undefined tensor, which the EP reports after creation (checkStoredConstants).
    constants_.push_back(index < info.storedConstants->size() ? (*info.storedConstants)[index] : Tensor());
  } else {
    constants_.push_back(produce());
  }
  return static_cast<uint32_t>(index);
}

// Which of a kernel's candidate configurations to register, as indices into `names` (the default first): the
// stored choice alone when info.tunedCandidate names one (a name not among them logs a warning and gives the
// default), every one when autotuning, else the default alone.
std::vector<size_t> candidatesToRegister(const KernelCreateInfo& info, const std::vector<std::string>& names);

// A kernel whose one tunable is the workgroup size (local_size_x) of its shaders, which index their work through
// rowStride and so run any size: 64 by default; 32, 128 and 256 are the other candidates ("local 128").
class WorkgroupTunedKernel : public VkKernel {
 public:
  size_t candidateCount() const override { return sizes_.size() > 1 ? sizes_.size() : 0; }
  void selectCandidate(size_t index) override { selected_ = index; }
  std::string candidateName(size_t index) const override { return localSizeName(sizes_[index]); }
  static std::string localSizeName(uint32_t size) { return "local " + std::to_string(size); }

 protected:
  // Picks the sizes to register (candidatesToRegister); call before useTunedShader.
  explicit WorkgroupTunedKernel(const KernelCreateInfo& info);
  // Registers `variant` at every picked size; the returned family index is what shader() takes.
  uint32_t useTunedShader(const ShaderVariant& variant);
  // The shader of `family` at the selected size, and that size (what linearGroups takes).
  uint32_t shader(uint32_t family) const { return families_[family][selected_]; }
  uint32_t localSize() const { return sizes_[selected_]; }

 private:
  std::vector<uint32_t> sizes_;
  std::vector<std::vector<uint32_t>> families_;
  size_t selected_ = 0;
};

// What the capability check knows about a node.
struct SupportQuery {
  const ir::Node& node;
  int64_t opset = 0;
  const DeviceInfo& device;
  std::vector<const Tensor*> constantInputs;          // as in KernelCreateInfo
  std::vector<const ir::ValueInfo*> inputInfo, outputInfo;
  std::vector<bool> inputOnHost;  // the input's value is known on the host at record time (integer parameters)

  // Initializers usually carry no value info: their tensor answers instead.
  DataType inputType(size_t i) const {
    if (i < inputInfo.size() && inputInfo[i] && inputInfo[i]->dtype != DataType::UNDEFINED) return inputInfo[i]->dtype;
    return i < constantInputs.size() && constantInputs[i] ? constantInputs[i]->dtype() : DataType::UNDEFINED;
  }
  DataType outputType(size_t i) const { return i < outputInfo.size() && outputInfo[i] ? outputInfo[i]->dtype : DataType::UNDEFINED; }
  bool hasInput(size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  bool onHost(size_t i) const { return i < inputOnHost.size() && inputOnHost[i]; }
  // Rank of input i when known, -1 otherwise.
  int inputRank(size_t i) const {
    if (i < inputInfo.size() && inputInfo[i] && inputInfo[i]->shape) return static_cast<int>(inputInfo[i]->shape->size());
    return i < constantInputs.size() && constantInputs[i] ? static_cast<int>(constantInputs[i]->rank()) : -1;
  }
};

using SupportCheck = std::function<NodeSupport(const SupportQuery&)>;
using KernelFactory = std::function<Result<std::unique_ptr<VkKernel>>(const KernelCreateInfo&)>;

// Domain of the nodes Kiln's own compile step creates (fused chains); never seen in user models' partitions.
inline constexpr const char* kKilnDomain = "kiln";

// One op's Vulkan kernel: the opset range it implements, the capability check, and the factory.
struct KernelEntry {
  KernelEntry(std::string op, int64_t since, int64_t end, SupportCheck check, KernelFactory factory,
              std::string opDomain = "")
      : opType(std::move(op)), sinceVersion(since), endVersion(end), support(std::move(check)),
        create(std::move(factory)), domain(std::move(opDomain)) {}

  std::string opType;
  int64_t sinceVersion = 1;
  int64_t endVersion = 1 << 30;
  SupportCheck support;
  KernelFactory create;
  std::string domain;  // "" = ai.onnx; kKilnDomain for nodes made by device fusions
};

// Helpers for support checks.
inline NodeSupport supported() { return {true, {}}; }
inline NodeSupport unsupported(std::string reason) { return {false, std::move(reason)}; }
// Float32 everywhere (every present input and output typed float32), else a reason naming the first other type.
NodeSupport requireFloat32(const SupportQuery& query, std::initializer_list<size_t> inputs = {0});
// One float type everywhere: the listed inputs and every output typed float32, or all float16 where the device has
// 16-bit storage (kernels that read and write float16 through shaders/storage.glsl); else a reason.
NodeSupport requireFloat(const SupportQuery& query, std::initializer_list<size_t> inputs = {0});

}  // namespace kiln::vk
