#include "ir/graph.h"

#include <set>

namespace kiln::ir {

const Attribute* Node::attribute(const std::string& key) const {
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

int64_t Node::attrInt(const std::string& key, int64_t fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::INT ? a->i : fallback;
}

float Node::attrFloat(const std::string& key, float fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::FLOAT ? a->f : fallback;
}

std::string Node::attrString(const std::string& key, const std::string& fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::STRING ? a->s : fallback;
}

std::vector<int64_t> Node::attrInts(const std::string& key, std::vector<int64_t> fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::INTS ? a->ints : fallback;
}

std::vector<float> Node::attrFloats(const std::string& key, std::vector<float> fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::FLOATS ? a->floats : fallback;
}

std::vector<std::string> Node::attrStrings(const std::string& key, std::vector<std::string> fallback) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::STRINGS ? a->strings : fallback;
}

const Graph* Node::subgraph(const std::string& key) const {
  const Attribute* a = attribute(key);
  return a && a->type == AttributeType::GRAPH ? a->g.get() : nullptr;
}

std::string Node::label() const {
  return name.empty() ? "(" + opType + ")" : "'" + name + "' (" + opType + ")";
}

const ValueInfo* Graph::findValueInfo(const std::string& value) const {
  for (const auto& in : inputs) {
    if (in.name == value) return &in;
  }
  for (const auto& out : outputs) {
    if (out.name == value) return &out;
  }
  auto it = valueInfo.find(value);
  return it == valueInfo.end() ? nullptr : &it->second;
}

namespace {

// Adds to `used` every name the graph reads that it does not define itself.
void collectFreeNames(const Graph& graph, std::set<std::string>& used) {
  std::set<std::string> defined;
  for (const auto& in : graph.inputs) defined.insert(in.name);
  for (const auto& [name, _] : graph.initializers) defined.insert(name);
  for (const auto& node : graph.nodes) defined.insert(node.outputs.begin(), node.outputs.end());
  std::set<std::string> reads;
  for (const auto& node : graph.nodes) {
    for (const auto& in : node.inputs) {
      if (!in.empty()) reads.insert(in);
    }
    for (const auto& [_, attr] : node.attributes) {
      if (attr.g) collectFreeNames(*attr.g, reads);
      for (const auto& g : attr.graphs) collectFreeNames(*g, reads);
    }
  }
  for (const auto& out : graph.outputs) reads.insert(out.name);
  for (const auto& name : reads) {
    if (!defined.count(name)) used.insert(name);
  }
}

}  // namespace

std::vector<std::string> Graph::implicitInputs(const Node& node) const {
  std::set<std::string> names;
  for (const auto& [_, attr] : node.attributes) {
    if (attr.g) collectFreeNames(*attr.g, names);
    for (const auto& g : attr.graphs) collectFreeNames(*g, names);
  }
  return {names.begin(), names.end()};
}

ValueMetadata toValueMetadata(const ValueInfo& info) {
  ValueMetadata meta;
  meta.name = info.name;
  meta.kind = info.kind;
  meta.dtype = info.dtype;
  meta.hasShape = info.shape.has_value();
  if (info.shape) meta.shape = *info.shape;
  return meta;
}

int64_t Model::opsetVersion(const std::string& domain) const {
  auto it = opsetImports.find(domain == "ai.onnx" ? "" : domain);
  return it == opsetImports.end() ? 0 : it->second;
}

}  // namespace kiln::ir
