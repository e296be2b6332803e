#include "epcontext_checks.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <functional>

namespace kiln::testing {
namespace fs = std::filesystem;

std::set<std::string> listFiles(const fs::path& folder) {
  std::set<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink() || it->is_regular_file()) files.insert(it->path().lexically_relative(folder).string());
  }
  return files;
}

std::string relativeTo(const fs::path& folder, const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path relative = fs::weakly_canonical(fs::absolute(path), ec).lexically_relative(fs::weakly_canonical(folder, ec));
  if (relative.empty() || *relative.begin() == "..") return {};
  return relative.string();
}

std::string describe(const std::set<std::string>& items) {
  std::string text = "{";
  for (const auto& item : items) text += (text.size() > 1 ? ", " : "") + item;
  return text + "}";
}

std::vector<std::byte> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(data.size());
  if (!data.empty()) std::memcpy(bytes.data(), data.data(), data.size());
  return bytes;
}

void writeFileBytes(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

onnx::ModelProto parseModel(std::span<const std::byte> bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) << "not an ONNX model";
  return model;
}

onnx::ModelProto readModel(const std::string& path) { return parseModel(readBytes(path)); }

fs::file_time_type modificationTime(const std::string& path) {
  std::error_code ec;
  return fs::last_write_time(path, ec);
}

namespace {

void walk(onnx::GraphProto& graph, const std::function<void(onnx::GraphProto&, onnx::NodeProto&)>& visit) {
  for (auto& node : *graph.mutable_node()) {
    visit(graph, node);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) walk(*attr.mutable_g(), visit);
      for (auto& g : *attr.mutable_graphs()) walk(g, visit);
    }
  }
}

void walkGraphs(const onnx::GraphProto& graph, const std::function<void(const onnx::GraphProto&)>& visit) {
  visit(graph);
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) walkGraphs(attr.g(), visit);
      for (const auto& g : attr.graphs()) walkGraphs(g, visit);
    }
  }
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.name());
  return out;
}

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The attribute `name` of `node` must exist with `type`.
const onnx::AttributeProto* typed(const onnx::NodeProto& node, const std::string& name, onnx::AttributeProto::AttributeType type) {
  const onnx::AttributeProto* attr = findAttribute(node, name);
  EXPECT_NE(attr, nullptr) << node.name() << " has no " << name;
  if (!attr) return nullptr;
  EXPECT_EQ(attr->type(), type) << node.name() << "." << name << " has type " << attr->type();
  return attr->type() == type ? attr : nullptr;
}

}  // namespace

std::vector<onnx::NodeProto*> epContextNodes(onnx::ModelProto& model) {
  std::vector<onnx::NodeProto*> nodes;
  walk(*model.mutable_graph(), [&](onnx::GraphProto&, onnx::NodeProto& node) {
    if (node.op_type() == "EPContext") nodes.push_back(&node);
  });
  return nodes;
}

const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

onnx::AttributeProto* findAttribute(onnx::NodeProto& node, const std::string& name) {
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::map<std::string, const onnx::TensorProto*> allInitializers(const onnx::ModelProto& model) {
  std::map<std::string, const onnx::TensorProto*> found;
  walkGraphs(model.graph(), [&](const onnx::GraphProto& graph) {
    for (const auto& t : graph.initializer()) found[t.name()] = &t;
  });
  return found;
}

std::string externalLocation(const onnx::TensorProto& tensor) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return {};
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") return entry.value();
  }
  return "(external without location)";
}

std::string metadataValue(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& entry : model.metadata_props()) {
    if (entry.key() == key) return entry.value();
  }
  return {};
}

void expectCtxModel(onnx::ModelProto ctx, const onnx::ModelProto& source, const CtxExpectation& expected) {
  // Graph inputs and outputs keep the source's names and order.
  EXPECT_EQ(names(ctx.graph().input()), names(source.graph().input()));
  EXPECT_EQ(names(ctx.graph().output()), names(source.graph().output()));

  bool importsMicrosoft = false;
  for (const auto& opset : ctx.opset_import()) {
    if (opset.domain() == "com.microsoft") importsMicrosoft = opset.version() == 1;
    EXPECT_TRUE(opset.domain().empty() || opset.domain() == "ai.onnx" || opset.domain() == "com.microsoft")
        << "opset of domain " << opset.domain() << " left in the ctx model";
  }
  EXPECT_TRUE(importsMicrosoft) << "com.microsoft opset 1 not imported";

  walk(*ctx.mutable_graph(), [&](onnx::GraphProto& graph, onnx::NodeProto& node) {
    EXPECT_NE(node.op_type(), "KilnPartition") << "fused node " << node.name() << " left in graph " << graph.name();
  });

  const auto nodes = epContextNodes(ctx);
  ASSERT_EQ(static_cast<int>(nodes.size()), expected.nodes);
  std::set<std::string> partitionNames;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& node = *nodes[i];
    SCOPED_TRACE("EPContext node " + std::to_string(i) + " '" + node.name() + "'");
    EXPECT_EQ(node.domain(), "com.microsoft");
    EXPECT_TRUE(startsWith(node.name(), expected.prefix)) << "prefix " << expected.prefix;
    EXPECT_GE(node.output_size(), 1);
    if (auto* a = typed(node, "source", onnx::AttributeProto::STRING)) { EXPECT_EQ(a->s(), "VulkanExecutionProvider"); }
    if (auto* a = typed(node, "embed_mode", onnx::AttributeProto::INT)) { EXPECT_EQ(a->i(), expected.embedMode); }
    const bool main = expected.embedMode == 0 || i == 0;
    if (auto* a = typed(node, "main_context", onnx::AttributeProto::INT)) { EXPECT_EQ(a->i(), main ? 1 : 0); }
    if (main) {
      if (auto* a = typed(node, "ep_cache_context", onnx::AttributeProto::STRING)) {
        if (expected.embedMode == 0) { EXPECT_EQ(a->s(), expected.binaryReference); }
        else { EXPECT_TRUE(startsWith(a->s(), "KILNVKCB")) << "the payload is not a context binary"; }
      }
    } else {
      EXPECT_EQ(findAttribute(node, "ep_cache_context"), nullptr) << "a main_context=0 node carries a payload";
    }
    if (auto* a = typed(node, "partition_name", onnx::AttributeProto::STRING)) {
      EXPECT_TRUE(startsWith(a->s(), expected.prefix)) << a->s();
      EXPECT_TRUE(partitionNames.insert(a->s()).second) << "partition_name " << a->s() << " twice";
    }
    if (auto* a = typed(node, "ep_sdk_version", onnx::AttributeProto::STRING)) { EXPECT_FALSE(a->s().empty()); }
    if (auto* a = typed(node, "hardware_architecture", onnx::AttributeProto::STRING)) { EXPECT_FALSE(a->s().empty()); }
    if (auto* a = typed(node, "notes", onnx::AttributeProto::STRING)) {
      const auto notes = nlohmann::json::parse(a->s(), nullptr, false);
      EXPECT_TRUE(notes.is_object() && notes.value("producer", "") == "kiln") << a->s();
    }
    if (expected.sourceModelFilename.empty()) {
      EXPECT_EQ(findAttribute(node, "onnx_model_filename"), nullptr);
    } else if (auto* a = typed(node, "onnx_model_filename", onnx::AttributeProto::STRING)) {
      EXPECT_EQ(a->s(), expected.sourceModelFilename);
    }
  }

  EXPECT_TRUE(startsWith(metadataValue(ctx, "ep_compatibility_info.VulkanExecutionProvider"), "kiln;version="));
  const std::string hash = metadataValue(ctx, "kiln.context_binary_hash." + expected.binaryReference);
  if (expected.embedMode == 0) {
    EXPECT_EQ(hash.size(), 16u) << "no content id recorded for " << expected.binaryReference;
  } else {
    for (const auto& entry : ctx.metadata_props()) {
      EXPECT_FALSE(startsWith(entry.key(), "kiln.context_binary_hash.")) << "embed mode 1 records " << entry.key();
    }
  }

  const auto initializers = allInitializers(ctx);
  for (const auto& name : expected.absentInitializers) {
    EXPECT_EQ(initializers.count(name), 0u) << "initializer " << name << " of a Vulkan partition left in the ctx model";
  }
  for (const auto& [name, location] : expected.initializerLocations) {
    auto it = initializers.find(name);
    ASSERT_NE(it, initializers.end()) << "initializer " << name << " of a CPU-fallback node missing";
    EXPECT_EQ(externalLocation(*it->second), location) << "where initializer " << name << " is";
  }
}

std::vector<std::vector<NamedTensor>> runAll(Session& session, const std::vector<std::vector<NamedTensor>>& inputSets) {
  std::vector<std::vector<NamedTensor>> outputs;
  for (const auto& inputs : inputSets) {
    auto result = session.run(inputs);
    EXPECT_TRUE(result.isOk()) << result.status().toString();
    if (!result.isOk()) return {};
    outputs.push_back(std::move(result).value());
  }
  return outputs;
}

void expectSameOutputs(const std::vector<std::vector<NamedTensor>>& expected,
                       const std::vector<std::vector<NamedTensor>>& actual, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t s = 0; s < expected.size(); ++s) {
    ASSERT_EQ(expected[s].size(), actual[s].size());
    for (size_t i = 0; i < expected[s].size(); ++i) {
      const Tensor& e = expected[s][i].tensor;
      const Tensor& a = actual[s][i].tensor;
      EXPECT_EQ(expected[s][i].name, actual[s][i].name);
      ASSERT_EQ(e.shape(), a.shape()) << expected[s][i].name;
      ASSERT_EQ(e.dtype(), a.dtype()) << expected[s][i].name;
      EXPECT_EQ(std::memcmp(e.rawData(), a.rawData(), e.byteSize()), 0)
          << "output " << expected[s][i].name << " of input set " << s << " differs";
    }
  }
}

void expectNoCompileWork(const Session& session, const std::string& what) {
  const WorkCounters& c = session.counters();
  EXPECT_EQ(c.glslang_compiles, 0) << what;
  EXPECT_EQ(c.spirv_cache_hits, 0) << what << ": shaders were looked up, so something was compiled";
  EXPECT_EQ(c.optimizer_passes_run, 0) << what;
  EXPECT_EQ(c.weights_prepacked, 0) << what;
}

SessionOptions withEntries(SessionOptions options, const std::map<std::string, std::string>& entries) {
  for (const auto& [key, value] : entries) EXPECT_TRUE(options.addConfigEntry(key, value).isOk()) << key;
  return options;
}

}  // namespace kiln::testing
