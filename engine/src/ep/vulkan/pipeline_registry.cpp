#include "ep/vulkan/pipeline_registry.h"

#include "ep/vulkan/vulkan_device.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::vk {

PipelineRegistry::PipelineRegistry(Device& device) : device_(device) {}

PipelineRegistry::~PipelineRegistry() {
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(device_.handle(), p->pipeline, nullptr);
    vkDestroyPipelineLayout(device_.handle(), p->layout, nullptr);
    vkDestroyDescriptorSetLayout(device_.handle(), p->setLayout, nullptr);
  }
  if (cache_) vkDestroyPipelineCache(device_.handle(), cache_, nullptr);
}

Status PipelineRegistry::attachDriverCache(std::span<const std::byte> blob) {
  std::unique_lock lock(mutex_);
  // vkMergePipelineCaches needs the cache to itself: wait out creations in flight (none start while locked).
  created_.wait(lock, [&] { return creating_.empty(); });
  VkDevice dev = device_.handle();
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = blob.size();
  info.pInitialData = blob.empty() ? nullptr : blob.data();
  if (cache_ == VK_NULL_HANDLE) {
    VkResult result = vkCreatePipelineCache(dev, &info, nullptr, &cache_);
    if (result != VK_SUCCESS && !blob.empty()) {
      log::info("the Vulkan driver refused the pipeline cache file's blob ({}); starting an empty VkPipelineCache",
                resultName(result));
      info.initialDataSize = 0;
      info.pInitialData = nullptr;
      result = vkCreatePipelineCache(dev, &info, nullptr, &cache_);
    }
    if (result != VK_SUCCESS) cache_ = VK_NULL_HANDLE;
    return check(result, "vkCreatePipelineCache");
  }
  if (blob.empty()) return Status::ok();
  // A later file's blob (another session's model): merged through a temporary cache, as ncnn does.
  VkPipelineCache incoming = VK_NULL_HANDLE;
  if (VkResult result = vkCreatePipelineCache(dev, &info, nullptr, &incoming); result != VK_SUCCESS) {
    log::info("the Vulkan driver refused a pipeline cache file's blob ({}); not merged", resultName(result));
    return Status::ok();
  }
  const VkResult merged = vkMergePipelineCaches(dev, cache_, 1, &incoming);
  vkDestroyPipelineCache(dev, incoming, nullptr);
  if (merged != VK_SUCCESS) log::info("vkMergePipelineCaches failed ({}); blob not merged", resultName(merged));
  return Status::ok();
}

Result<std::vector<std::byte>> PipelineRegistry::driverCacheData() const {
  std::lock_guard lock(mutex_);  // pipelines are created under it too, so the size cannot change in between
  if (cache_ == VK_NULL_HANDLE) return std::vector<std::byte>();
  size_t size = 0;
  KILN_RETURN_IF_ERROR(check(vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr), "vkGetPipelineCacheData"));
  std::vector<std::byte> data(size);
  KILN_RETURN_IF_ERROR(check(vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data()), "vkGetPipelineCacheData"));
  data.resize(size);
  return data;
}

const Pipeline* PipelineRegistry::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = pipelines_.find(key);
  return it == pipelines_.end() ? nullptr : it->second.get();
}

Result<const Pipeline*> PipelineRegistry::get(const ShaderVariant& variant, const std::vector<uint32_t>& spirv,
                                              Stats* stats, bool withoutDriverCache) {
  const std::string key = variant.key();
  std::unique_lock lock(mutex_);
  // Concurrent sessions (or threads of one load) asking for one variant create it once, as ncnn does; different
  // variants are created in parallel, without the lock.
  created_.wait(lock, [&] { return !creating_.count(key); });
  if (auto it = pipelines_.find(key); it != pipelines_.end()) {
    if (stats) *stats = {};
    return it->second.get();
  }
  creating_.insert(key);
  const VkPipelineCache cache = withoutDriverCache ? VK_NULL_HANDLE : cache_;
  lock.unlock();
  Stopwatch clock;
  Result<std::unique_ptr<Pipeline>> made = create(variant, spirv, cache);
  const double createMs = clock.elapsedMs();
  lock.lock();
  creating_.erase(key);
  created_.notify_all();
  if (!made.isOk()) return made.status();
  if (stats) *stats = {createMs, true};
  const Pipeline* result = made.value().get();
  pipelines_.emplace(key, std::move(made).value());
  return result;
}

Result<std::unique_ptr<Pipeline>> PipelineRegistry::create(const ShaderVariant& variant, const std::vector<uint32_t>& spirv,
                                                           VkPipelineCache cache) const {
  const std::string key = variant.key();
  VkDevice dev = device_.handle();
  auto pipeline = std::make_unique<Pipeline>();
  pipeline->key = key;
  pipeline->bindings = variant.bindings;
  pipeline->localSize[0] = variant.localSizeX;
  pipeline->localSize[1] = variant.localSizeY;
  pipeline->localSize[2] = variant.localSizeZ;

  std::vector<VkDescriptorSetLayoutBinding> bindings(variant.bindings);
  for (uint32_t i = 0; i < variant.bindings; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (device_.pushDescriptorFn()) setInfo.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  setInfo.bindingCount = variant.bindings;
  setInfo.pBindings = bindings.data();
  KILN_RETURN_IF_ERROR(check(vkCreateDescriptorSetLayout(dev, &setInfo, nullptr, &pipeline->setLayout),
                             "vkCreateDescriptorSetLayout"));
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &pipeline->setLayout;
  layoutInfo.pushConstantRangeCount = 1;
  layoutInfo.pPushConstantRanges = &push;
  Status status = check(vkCreatePipelineLayout(dev, &layoutInfo, nullptr, &pipeline->layout), "vkCreatePipelineLayout");

  VkShaderModule module = VK_NULL_HANDLE;
  if (status.isOk()) {
    VkShaderModuleCreateInfo moduleInfo{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    moduleInfo.codeSize = spirv.size() * sizeof(uint32_t);
    moduleInfo.pCode = spirv.data();
    status = check(vkCreateShaderModule(dev, &moduleInfo, nullptr, &module), "vkCreateShaderModule");
  }
  if (status.isOk()) {
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.layout = pipeline->layout;
    status = check(vkCreateComputePipelines(dev, cache, 1, &info, nullptr, &pipeline->pipeline),
                   "vkCreateComputePipelines");
  }
  if (module) vkDestroyShaderModule(dev, module, nullptr);
  if (!status.isOk()) {
    if (pipeline->layout) vkDestroyPipelineLayout(dev, pipeline->layout, nullptr);
    vkDestroyDescriptorSetLayout(dev, pipeline->setLayout, nullptr);
    return Status(StatusCode::EP_FAIL, status.message() + " for shader '" + variant.shader + "' (" + key + ")");
  }
  return pipeline;
}

}  // namespace kiln::vk
