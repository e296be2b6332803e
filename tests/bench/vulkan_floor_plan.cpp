#include "vulkan_floor_plan.h"

#include <charconv>
#include <map>
#include <set>

namespace kiln::vkfloor {
namespace {

// SPIR-V opcodes, decorations and storage classes (SPIR-V specification, section 3).
constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kStorageClassUniform = 2;
constexpr uint32_t kStorageClassStorageBuffer = 12;

Status invalid(const std::string& why) { return Status(StatusCode::INVALID_GRAPH, why); }

bool parseNumber(std::string_view text, uint32_t* value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

// "conv|b4|l64x1x1|K=3" → bindings 4, local size 64x1x1 (ShaderVariant::key in
// engine/src/ep/vulkan/shader_library).
Result<PipelineRecipe> recipeFromKey(const std::string& key) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t bar = key.find('|', start);
    parts.emplace_back(
        std::string_view(key).substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  PipelineRecipe recipe;
  recipe.key = key;
  const auto bad = [&] {
    return invalid("shader variant key '" + key + "' is not shader|b<bindings>|l<x>x<y>x<z>|...");
  };
  if (parts.size() < 3 || parts[1].size() < 2 || parts[1][0] != 'b' || parts[2].size() < 2 ||
      parts[2][0] != 'l') {
    return bad();
  }
  if (!parseNumber(parts[1].substr(1), &recipe.bindings)) return bad();
  std::string_view size = parts[2].substr(1);
  for (size_t d = 0; d < 3; ++d) {
    const size_t x = d < 2 ? size.find('x') : std::string_view::npos;
    if (d < 2 && x == std::string_view::npos) return bad();
    if (!parseNumber(size.substr(0, x), &recipe.localSize[d])) return bad();
    if (d < 2) size.remove_prefix(x + 1);
  }
  return recipe;
}

// The bytes of every upload of one partition, in the engine's order (see the header).
Status addUploads(const CompiledPartition& partition, FloorPlan& plan) {
  const ir::Graph& graph = *partition.graph;
  if (partition.nodes.size() != graph.nodes.size()) {
    return invalid("partition '" + partition.name + "' stores " + std::to_string(partition.nodes.size()) +
                   " node records for " + std::to_string(graph.nodes.size()) + " nodes");
  }
  std::set<std::string> deviceRead;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!partition.nodes[i].onHost)
      deviceRead.insert(graph.nodes[i].inputs.begin(), graph.nodes[i].inputs.end());
  }
  auto add = [&](const Tensor& tensor) {
    plan.uploads.push_back({tensor.rawData(), tensor.byteSize()});
    plan.uploadBytes += tensor.byteSize();
  };
  for (const auto& [name, tensor] : graph.initializers) {
    // No values: the kernels folded it into their constants, and no reader needs it.
    if (deviceRead.count(name) && tensor.dtype() != DataType::STRING && tensor.rawData()) add(tensor);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (partition.nodes[i].onHost) continue;
    for (const Tensor& constant : partition.nodes[i].constants) {
      if (!constant.rawData() && constant.byteSize() > 0) {
        return invalid("a prepacked constant of " + graph.nodes[i].label() + " in partition '" +
                       partition.name + "' has no stored values");
      }
      add(constant);
    }
  }
  return Status::ok();
}

}  // namespace

Result<SpirvLayout> reflectSpirv(std::span<const uint32_t> words) {
  if (words.size() < 5 || words[0] != kSpirvMagic) return invalid("not a SPIR-V module");
  SpirvLayout layout;
  std::map<uint32_t, uint32_t> binding, set;
  std::vector<uint32_t> buffers;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || count > words.size() - i)
      return invalid("SPIR-V instruction at word " + std::to_string(i) + " runs past the module");
    if (opcode == kOpExecutionMode && count >= 6 && words[i + 2] == kExecutionModeLocalSize) {
      layout.localSize = {words[i + 3], words[i + 4], words[i + 5]};
    } else if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kDecorationBinding) {
      binding[words[i + 1]] = words[i + 3];
    } else if (opcode == kOpDecorate && count >= 4 && words[i + 2] == kDecorationDescriptorSet) {
      set[words[i + 1]] = words[i + 3];
    } else if (opcode == kOpVariable && count >= 4 &&
               (words[i + 3] == kStorageClassStorageBuffer || words[i + 3] == kStorageClassUniform)) {
      buffers.push_back(words[i + 2]);
    }
    i += count;
  }
  for (uint32_t id : buffers) {
    if (set.count(id) && set[id] != 0) layout.otherSets = true;
    if (binding.count(id) && (!set.count(id) || set[id] == 0)) {
      layout.bindingsUsed = std::max(layout.bindingsUsed, binding[id] + 1);
    }
  }
  return layout;
}

Result<FloorPlan> planFromBinary(std::shared_ptr<const ctxbin::ContextBinary> binary) {
  FloorPlan plan;
  plan.binary = std::move(binary);
  const std::string& origin = plan.binary->origin();
  KILN_ASSIGN_OR_RETURN(plan.partitions, plan.binary->partitions());
  KILN_ASSIGN_OR_RETURN(const ctxbin::WeightTableReader weights, plan.binary->weights());
  plan.weightBlobBytes = weights.blobBytes();
  plan.pushConstantBytes = plan.binary->header().requiredPushConstantBytes;
  if (plan.pushConstantBytes == 0) return invalid(origin + ": the header records no push-constant size");
  for (const auto& section : plan.binary->sections()) {
    if (section.kind == ctxbin::SectionKind::SPIRV) plan.spirvModules = section.items;
  }
  std::set<std::string> seen;
  for (const CompiledPartition& partition : plan.partitions) {
    for (const auto& [key, words] : partition.spirv) {
      if (!seen.insert(key).second) continue;  // one pipeline per variant, whichever partitions use it
      KILN_ASSIGN_OR_RETURN(PipelineRecipe recipe, recipeFromKey(key));
      KILN_ASSIGN_OR_RETURN(const SpirvLayout layout, reflectSpirv(words));
      if (layout.localSize != recipe.localSize || layout.bindingsUsed > recipe.bindings || layout.otherSets) {
        return invalid(origin + ": the SPIR-V of '" + key + "' declares workgroup " +
                       std::to_string(layout.localSize[0]) + "x" + std::to_string(layout.localSize[1]) + "x" +
                       std::to_string(layout.localSize[2]) + " and " + std::to_string(layout.bindingsUsed) +
                       " bindings" + (layout.otherSets ? " (and other sets)" : "") +
                       ", which its key contradicts");
      }
      recipe.spirv = words;
      plan.spirvBytes += words.size() * sizeof(uint32_t);
      plan.pipelines.push_back(std::move(recipe));
    }
    KILN_RETURN_IF_ERROR(addUploads(partition, plan).withContext(origin));
  }
  return plan;
}

}  // namespace kiln::vkfloor
