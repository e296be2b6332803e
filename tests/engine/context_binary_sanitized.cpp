// The context binary's sanitizer target (ASan + UBSan, built on its own from the format's sources, so no second
// full build): a synthetic binary exercising every section and attribute kind, written, read back and then
// mutated (binary_mutations.h). Needs no Vulkan device. Exit 0 when every mutation was handled cleanly.
#include <cstdio>
#include <cstring>

#include "binary_mutations.h"
#include "context_binary/verdict.h"
#include "device/device_profile.h"

namespace kiln {
namespace {

// A SPIR-V module of just a header and its capabilities, with a LocalSize execution mode.
std::vector<uint32_t> spirvModule(std::initializer_list<uint32_t> capabilities) {
  std::vector<uint32_t> words{0x07230203, 0x00010300, 0, 8, 0};
  for (uint32_t c : capabilities) words.insert(words.end(), {(2u << 16) | 17u, c});
  words.insert(words.end(), {(6u << 16) | 16u, 1, 17, 64, 1, 1});
  return words;
}

ir::Attribute attribute(std::string name, ir::AttributeType type) {
  ir::Attribute a;
  a.name = std::move(name);
  a.type = type;
  return a;
}

CompiledPartition partition(const std::string& name, const vk::DeviceInfo& target) {
  auto graph = std::make_shared<ir::Graph>();
  graph->name = name;
  ir::Node conv;
  conv.name = name + "_conv";
  conv.opType = "Conv";
  conv.inputs = {"x", "w", ""};
  conv.outputs = {"y"};
  auto pads = attribute("pads", ir::AttributeType::INTS);
  pads.ints = {1, 1, 1, 1};
  auto alpha = attribute("kiln_alpha", ir::AttributeType::FLOAT);
  alpha.f = 0.1f;
  auto act = attribute("kiln_activation", ir::AttributeType::STRING);
  act.s = "Relu";
  auto value = attribute("value", ir::AttributeType::TENSOR);
  value.t = Tensor::fromVector<int64_t>({2}, {3, 4});
  auto names = attribute("names", ir::AttributeType::STRINGS);
  names.strings = {"a", "bc"};
  auto tensors = attribute("tensors", ir::AttributeType::TENSORS);
  tensors.tensors = {Tensor::fromVector<float>({1}, {2.5f}), Tensor::fromStrings({2}, {"x", "yz"})};
  auto floats = attribute("floats", ir::AttributeType::FLOATS);
  floats.floats = {0.5f, 1.5f};
  for (auto* a : {&pads, &alpha, &act, &value, &names, &tensors, &floats}) conv.attributes[a->name] = *a;
  ir::Node shape;
  shape.opType = "Shape";
  shape.inputs = {"y"};
  shape.outputs = {"s"};
  graph->nodes = {conv, shape};
  std::vector<float> weights(4 * 3 * 3 * 3);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i) * 0.01f;
  graph->initializers["w"] = Tensor::fromVector<float>({4, 3, 3, 3}, weights);
  graph->initializers["w_copy"] = Tensor::fromVector<float>({4, 3, 3, 3}, weights);  // deduplicated
  graph->initializers["labels"] = Tensor::fromStrings({2}, {"cat", "dog"});
  ir::ValueInfo x{"x", ir::ValueKind::TENSOR, DataType::FLOAT, std::vector<Dimension>{{-1, "N"}, {3, ""}, {8, ""}, {8, ""}}};
  graph->inputs = {x};
  graph->outputs = {{"y", ir::ValueKind::TENSOR, DataType::FLOAT, std::nullopt}, {"s", ir::ValueKind::TENSOR, DataType::INT64, std::nullopt}};
  graph->valueInfo["y"] = graph->outputs[0];

  CompiledPartition p;
  p.name = name;
  p.executionProvider = "VulkanExecutionProvider";
  p.inputs = {"x", "w"};
  p.outputs = {"y", "s"};
  p.graph = graph;
  p.opsets = {{"", 17}, {"kiln", 1}};
  CompiledNode convNode, shapeNode;
  convNode.constants = {Tensor::fromVector<float>({4}, {1, 2, 3, 4}), graph->initializers["w"]};
  convNode.absorbedInputs = {1};  // w is stored shape-only unless another reader needs it (w_copy is not read)
  shapeNode.onHost = true;
  p.nodes = {convNode, shapeNode};
  p.spirv = {{"conv2d|A=1", spirvModule({1, 63})}, {"shape|", spirvModule({1, 4448})}};
  p.pipelineUsers = {{"conv2d|A=1", {0}}, {"shape|", {0, 1}}};  // the pipeline_users section (format 1.2)
  p.targetProfile = vk::deviceProfileJson(target);
  return p;
}

vk::DeviceInfo device() {
  vk::DeviceInfo d;
  d.name = "Synthetic GPU";
  d.type = VulkanDeviceType::DISCRETE;
  d.vendorId = 0x1002;
  d.deviceId = 0x73bf;
  d.apiVersion = (1u << 22) | (3u << 12);
  d.driverVersion = 0x800000;
  d.driverId = 1;
  d.driverName = "synthetic";
  d.driverInfo = "synthetic 1.0";
  d.pipelineCacheUuid[0] = 0xab;
  d.subgroupSize = 64;
  d.subgroupArithmetic = true;
  d.storageBuffer8Bit = true;
  d.maxComputeWorkGroupInvocations = 1024;
  d.maxComputeWorkGroupSize = {1024, 1024, 64};
  d.maxComputeWorkGroupCount = {65535, 65535, 65535};
  d.maxPushConstantsSize = 128;
  d.maxStorageBufferRange = 1u << 30;
  return d;
}

}  // namespace
}  // namespace kiln

int main() {
  using namespace kiln;
  const vk::DeviceInfo target = device();
  ctxbin::BinaryContents contents;
  contents.target = target;
  contents.partitions = {partition("model_a_vulkan_0", target), partition("model_b_vulkan_0", target)};
  contents.driverCache.assign(48, std::byte{0x11});
  contents.requiredPushConstantBytes = 128;  // the Vulkan EP's push-constant block
  ctxbin::WeightStats stats;
  auto bytes = ctxbin::encodeContextBinary(contents, &stats);
  if (!bytes.isOk()) {
    std::fprintf(stderr, "encoding failed: %s\n", bytes.status().toString().c_str());
    return 1;
  }
  // Sanity: it reads back, deduplicates, and the verdict against its own device is optimal.
  auto binary = ctxbin::ContextBinary::fromBytes(bytes.value(), "synthetic");
  auto partitions = binary.isOk() ? binary.value()->partitions() : Result<std::vector<CompiledPartition>>(binary.status());
  if (!partitions.isOk() || partitions->size() != 2 || stats.blobs >= stats.references ||
      partitions->front().pipelineUsers != contents.partitions.front().pipelineUsers) {
    std::fprintf(stderr, "round trip failed: %s\n", partitions.status().toString().c_str());
    return 1;
  }
  const auto verdict = ctxbin::judge(*binary.value(), target, "synthetic");
  if (verdict.compatibility != Compatibility::OPTIMAL) {
    std::fprintf(stderr, "verdict against the producer is %s\n", compatibilityName(verdict.compatibility));
    return 1;
  }
  size_t failures = 0;
  const size_t cases = testing::mutateContextBinary(bytes.value(), [&](const std::string& what) {
    if (failures++ < 20) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  });
  std::printf("%zu mutated binaries, %zu failures\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
