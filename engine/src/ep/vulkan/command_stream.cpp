#include "ep/vulkan/command_stream.h"

#include "ep/vulkan/vulkan_device.h"

namespace kiln::vk {
namespace {
constexpr uint32_t kSetsPerPool = 1024;
}

Result<std::unique_ptr<CommandStream>> CommandStream::create(std::shared_ptr<Device> device) {
  std::unique_ptr<CommandStream> stream(new CommandStream(std::move(device)));
  VkDevice dev = stream->device_->handle();
  VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = stream->device_->queueFamily();
  KILN_RETURN_IF_ERROR(check(vkCreateCommandPool(dev, &poolInfo, nullptr, &stream->pool_), "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo allocInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocInfo.commandPool = stream->pool_;
  allocInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocInfo.commandBufferCount = 1;
  KILN_RETURN_IF_ERROR(check(vkAllocateCommandBuffers(dev, &allocInfo, &stream->commands_), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  KILN_RETURN_IF_ERROR(check(vkCreateFence(dev, &fenceInfo, nullptr, &stream->fence_), "vkCreateFence"));
  return stream;
}

CommandStream::~CommandStream() {
  VkDevice dev = device_->handle();
  if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
  for (VkDescriptorPool pool : retiredPools_) vkDestroyDescriptorPool(dev, pool, nullptr);
  if (descriptorPool_) vkDestroyDescriptorPool(dev, descriptorPool_, nullptr);
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (pool_) vkDestroyCommandPool(dev, pool_, nullptr);
}

Status CommandStream::begin() {
  VkDevice dev = device_->handle();
  KILN_RETURN_IF_ERROR(check(vkResetCommandBuffer(commands_, 0), "vkResetCommandBuffer"));
  if (descriptorPool_) vkResetDescriptorPool(dev, descriptorPool_, 0);
  for (VkDescriptorPool pool : retiredPools_) vkDestroyDescriptorPool(dev, pool, nullptr);
  retiredPools_.clear();
  descriptorPoolSets_ = 0;
  dispatches_ = 0;
  commandsRecorded_ = 0;
  queryUsed_ = 0;
  VkCommandBufferBeginInfo beginInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  beginInfo.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  KILN_RETURN_IF_ERROR(check(vkBeginCommandBuffer(commands_, &beginInfo), "vkBeginCommandBuffer"));
  if (queries_) vkCmdResetQueryPool(commands_, queries_, 0, queryCapacity_);
  return Status::ok();
}

void CommandStream::barrier() {
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  memory.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(commands_, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &memory, 0, nullptr, 0, nullptr);
}

void CommandStream::dispatch(const Pipeline& pipeline, std::span<const BufferRange> buffers, const void* push,
                             size_t pushBytes, std::array<uint32_t, 3> groups) {
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) return;
  vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    infos[i] = {buffers[i].buffer, buffers[i].offset, buffers[i].size};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  if (auto pushDescriptors = device_->pushDescriptorFn()) {
    pushDescriptors(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, static_cast<uint32_t>(writes.size()),
                    writes.data());
  } else {
    // Without push descriptors: sets from a per-run pool (a full pool is retired until the next run).
    if (!descriptorPool_ || descriptorPoolSets_ == kSetsPerPool) {
      if (descriptorPool_) retiredPools_.push_back(descriptorPool_);
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8};
      VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      vkCreateDescriptorPool(device_->handle(), &info, nullptr, &descriptorPool_);
      descriptorPoolSets_ = 0;
    }
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = descriptorPool_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &pipeline.setLayout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    vkAllocateDescriptorSets(device_->handle(), &alloc, &set);
    ++descriptorPoolSets_;
    for (auto& write : writes) write.dstSet = set;
    vkUpdateDescriptorSets(device_->handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  }
  if (pushBytes > 0) {
    vkCmdPushConstants(commands_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<uint32_t>(pushBytes), push);
  }
  vkCmdDispatch(commands_, groups[0], groups[1], groups[2]);
  ++dispatches_;
  ++commandsRecorded_;
  barrier();
}

void CommandStream::copy(const BufferRange& from, const BufferRange& to, VkDeviceSize bytes) {
  if (bytes == 0) return;
  VkBufferCopy region{from.offset, to.offset, bytes};
  vkCmdCopyBuffer(commands_, from.buffer, to.buffer, 1, &region);
  ++commandsRecorded_;
  barrier();
}

Status CommandStream::enableTimestamps(uint32_t count) {
  if (queries_ && count <= queryCapacity_) return Status::ok();
  if (queries_) vkDestroyQueryPool(device_->handle(), queries_, nullptr);
  queries_ = VK_NULL_HANDLE;
  queryCapacity_ = 0;
  if (count == 0) return Status::ok();
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = count;
  KILN_RETURN_IF_ERROR(check(vkCreateQueryPool(device_->handle(), &info, nullptr, &queries_), "vkCreateQueryPool"));
  queryCapacity_ = count;
  return Status::ok();
}

int CommandStream::timestamp() {
  if (!queries_ || queryUsed_ >= queryCapacity_) return -1;
  vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, queryUsed_);
  ++commandsRecorded_;
  return static_cast<int>(queryUsed_++);
}

std::vector<uint64_t> CommandStream::readTimestamps(uint32_t count) {
  std::vector<uint64_t> ticks(count, 0);
  if (!queries_ || count == 0 || count > queryCapacity_) return ticks;
  vkGetQueryPoolResults(device_->handle(), queries_, 0, count, ticks.size() * sizeof(uint64_t), ticks.data(),
                        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  const double period = device_->info().timestampPeriodNs;
  for (auto& t : ticks) t = static_cast<uint64_t>(static_cast<double>(t) * period);
  return ticks;
}

Status CommandStream::submitAndWait() {
  KILN_RETURN_IF_ERROR(check(vkEndCommandBuffer(commands_), "vkEndCommandBuffer"));
  // Partitions of views and host shape arithmetic record nothing: no queue round trip for them.
  if (commandsRecorded_ == 0) return Status::ok();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands_;
  {
    std::lock_guard lock(device_->submitMutex());
    KILN_RETURN_IF_ERROR(check(vkQueueSubmit(device_->queue(), 1, &submit, fence_), "vkQueueSubmit"));
  }
  const VkResult waited = vkWaitForFences(device_->handle(), 1, &fence_, VK_TRUE, UINT64_MAX);
  vkResetFences(device_->handle(), 1, &fence_);
  return check(waited, "waiting for the Vulkan queue");
}

}  // namespace kiln::vk
