#include "epcontext/ctx_model_writer.h"

#include <nlohmann/json.hpp>

#include <set>

#include "context_binary/compatibility_info.h"
#include "context_binary/format.h"
#include "epcontext/compile_record.h"
#include "epcontext/epcontext_names.h"
#include "epcontext/io_signature.h"
#include "kiln/epcontext.h"
#include "kiln/version.h"
#include "partition/graph_partitioner.h"

namespace kiln::epctx {
namespace {

ir::Attribute intAttribute(const char* name, int64_t value) {
  ir::Attribute attr;
  attr.name = name;
  attr.type = ir::AttributeType::INT;
  attr.i = value;
  return attr;
}

ir::Attribute stringAttribute(const char* name, std::string value) {
  ir::Attribute attr;
  attr.name = name;
  attr.type = ir::AttributeType::STRING;
  attr.s = std::move(value);
  return attr;
}

bool isFusedNode(const ir::Node& node) {
  return node.opType == kFusedPartitionOpType && node.domain == kFusedPartitionDomain;
}

template <class Visit>
void forEachSubgraph(ir::Node& node, Visit&& visit) {
  for (auto& [key, attr] : node.attributes) {
    if (attr.g) visit(*attr.g);
    for (auto& g : attr.graphs) {
      if (g) visit(*g);
    }
  }
}

// Walks graphs in topological order, visiting a node before the bodies it owns.
template <class Visit>
void walkNodes(ir::Graph& graph, Visit&& visit) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    visit(graph, i);
    forEachSubgraph(graph.nodes[i], [&](ir::Graph& body) { walkNodes(body, visit); });
  }
}

// Drops initializers no node (or subgraph) reads any more; graph inputs and outputs keep theirs.
void dropUnreadInitializers(ir::Graph& graph) {
  std::set<std::string> read;
  for (const auto& node : graph.nodes) {
    read.insert(node.inputs.begin(), node.inputs.end());
    for (auto& name : graph.implicitInputs(node)) read.insert(std::move(name));
  }
  for (const auto& v : graph.inputs) read.insert(v.name);
  for (const auto& v : graph.outputs) read.insert(v.name);
  std::erase_if(graph.initializers, [&](const auto& entry) { return !read.count(entry.first); });
  std::erase_if(graph.valueInfo, [&](const auto& entry) { return graph.isInitializer(entry.first); });
}

std::string hardwareArchitecture(const vk::DeviceInfo& target) {
  return target.driverInfo.empty() ? target.name : target.name + "; " + target.driverInfo;
}

std::string notesFor(const CompiledPartition& partition) {
  nlohmann::json notes;
  notes["producer"] = "kiln";
  notes["binary_format"] = std::to_string(ctxbin::kFormatMajor) + "." + std::to_string(ctxbin::kFormatMinor);
  notes["nodes"] = partition.graph ? partition.graph->nodes.size() : 0;
  notes["spirv_modules"] = partition.spirv.size();
  notes["target"] = partition.targetIsProfile ? "profile" : "device";
  return notes.dump();
}

}  // namespace

bool isEpContextNode(const ir::Node& node) { return kiln::isEpContextNode(node.opType, node.domain); }

bool isVulkanSource(const std::string& source) { return source == kVulkanSource || source == kVulkanShortSource; }

std::shared_ptr<ir::Graph> cloneGraph(const ir::Graph& graph) {
  auto copy = std::make_shared<ir::Graph>(graph);
  for (auto& node : copy->nodes) {
    for (auto& [key, attr] : node.attributes) {
      if (attr.g) attr.g = cloneGraph(*attr.g);
      for (auto& g : attr.graphs) {
        if (g) g = cloneGraph(*g);
      }
    }
  }
  return copy;
}

std::vector<std::pair<ir::Graph*, size_t>> epContextNodes(ir::Model& model) {
  std::vector<std::pair<ir::Graph*, size_t>> found;
  if (!model.graph) return found;
  walkNodes(*model.graph, [&](ir::Graph& graph, size_t i) {
    if (isEpContextNode(graph.nodes[i])) found.emplace_back(&graph, i);
  });
  return found;
}

void applyNodeNamePrefix(CompiledModel& compiled, const std::string& prefix) {
  if (prefix.empty()) return;
  for (auto& partition : compiled.partitions) {
    partition.name = prefix + partition.name;
    if (partition.graph) {
      auto renamed = std::make_shared<ir::Graph>(*partition.graph);
      renamed->name = partition.name;
      partition.graph = std::move(renamed);
    }
  }
  compiled.model.graph = cloneGraph(*compiled.model.graph);
  walkNodes(*compiled.model.graph, [&](ir::Graph& graph, size_t i) {
    if (isFusedNode(graph.nodes[i])) graph.nodes[i].name = prefix + graph.nodes[i].name;
  });
}

Result<ir::Model> epContextModelFor(const CompiledModel& compiled, const EpContextSettings& settings,
                                   const ctxbin::BinaryHead& head, std::span<const std::byte> embedded,
                                   const vk::DeviceInfo& target) {
  if (settings.embedMode == 1 && embedded.size() != head.header.fileSize) {
    return Status(StatusCode::INVALID_ARGUMENT, "embed mode 1 needs the whole context binary");
  }
  ir::Model model = compiled.model;
  model.graph = cloneGraph(*compiled.model.graph);
  bool first = true;
  Status status;
  // Bodies first (post-order), so a graph's initializer pruning sees what its rewritten bodies still read.
  std::function<void(ir::Graph&)> rewrite = [&](ir::Graph& graph) {
    for (auto& node : graph.nodes) {
      if (!isFusedNode(node)) {
        forEachSubgraph(node, rewrite);
        continue;
      }
      const int64_t index = node.attrInt(kFusedPartitionAttribute, -1);
      if (index < 0 || static_cast<size_t>(index) >= compiled.partitions.size()) {
        status = Status(StatusCode::INVALID_GRAPH, "fused node " + node.label() + " names no compiled partition");
        return;
      }
      const CompiledPartition& partition = compiled.partitions[static_cast<size_t>(index)];
      ir::Node context;
      context.name = node.name;
      context.opType = kOpType;
      context.domain = kDomain;
      context.inputs = partition.inputs;  // run-time inputs only: the binary holds the partition's initializers
      context.outputs = node.outputs;
      auto add = [&](ir::Attribute attr) { context.attributes[attr.name] = std::move(attr); };
      const bool main = settings.embedMode == 0 || first;
      add(intAttribute(kMainContext, main ? 1 : 0));
      add(intAttribute(kEmbedMode, settings.embedMode));
      if (main) {
        add(stringAttribute(kEpCacheContext,
                            settings.embedMode == 1 ? std::string(reinterpret_cast<const char*>(embedded.data()), embedded.size())
                                                    : settings.binaryReference));
      }
      add(stringAttribute(kPartitionName, partition.name));
      add(stringAttribute(kSource, partition.executionProvider));
      add(stringAttribute(kEpSdkVersion, engineVersion()));
      add(stringAttribute(kHardwareArchitecture, hardwareArchitecture(target)));
      add(stringAttribute(kNotes, notesFor(partition)));
      add(intAttribute(kMaxSize, 0));
      if (!settings.sourceModelFilename.empty()) add(stringAttribute(kOnnxModelFilename, settings.sourceModelFilename));
      node = std::move(context);
      first = false;
    }
    dropUnreadInitializers(graph);
  };
  rewrite(*model.graph);
  KILN_RETURN_IF_ERROR(status);

  model.opsetImports.erase(kFusedPartitionDomain);
  model.opsetImports[kDomain] = kDomainVersion;
  std::erase_if(model.metadata, [](const auto& entry) {
    return entry.first.rfind(kCompatibilityInfoKeyPrefix, 0) == 0 || entry.first == kCompileRecordKey || entry.first == kIoDigestKey ||
           entry.first.rfind(kBinaryHashKeyPrefix, 0) == 0;
  });
  model.metadata.emplace_back(kIoDigestKey, declaredIoDigest(model));
  if (!settings.compileRecord.empty()) model.metadata.emplace_back(kCompileRecordKey, settings.compileRecord);
  if (!compiled.partitions.empty()) {  // one binary is one EP's: the key names it, as onnxruntime's does
    model.metadata.emplace_back(kCompatibilityInfoKeyPrefix + compiled.partitions.front().executionProvider,
                                ctxbin::compatibilityInfoFor(head.header, head.sections, target));
  }
  if (settings.embedMode == 0) {
    model.metadata.emplace_back(kBinaryHashKeyPrefix + settings.binaryReference,
                                ctxbin::contentIdHex(ctxbin::contentIdOf(head.bytes)));
  }
  return model;
}

}  // namespace kiln::epctx
