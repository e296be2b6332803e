// kiln/model_info.h: a read-only description of a model for tools.
#include "kiln/model_info.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "onnx/model_loader.h"

namespace kiln {
namespace {

// Lists longer than this show their first items and the count: a 4096-entry `pads` is not readable anyway.
constexpr size_t kMaxListItems = 16;
// Strings longer than this, or with bytes that are not printable text, show only their size.
constexpr size_t kMaxStringChars = 96;

std::string formatFloat(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
  return text;
}

bool printable(const std::string& text) {
  for (unsigned char c : text) {
    if (c < 0x20 && c != '\t') return false;
    if (c == 0x7f) return false;
  }
  return true;
}

std::string formatString(const std::string& text) {
  if (text.size() > kMaxStringChars || !printable(text)) return "<" + std::to_string(text.size()) + " bytes>";
  return "\"" + text + "\"";
}

std::string formatTensor(const Tensor& tensor) {
  std::string text = dataTypeName(tensor.dtype());
  text += "[";
  for (size_t i = 0; i < tensor.shape().size(); ++i) text += (i ? "," : "") + std::to_string(tensor.shape()[i]);
  return text + "]";
}

std::string formatGraph(const std::shared_ptr<ir::Graph>& graph) {
  if (!graph) return "graph";
  return "graph '" + graph->name + "' (" + std::to_string(graph->nodes.size()) + " nodes)";
}

template <typename T, typename Format>
std::string formatList(const std::vector<T>& items, Format format) {
  std::string text = "[";
  const size_t shown = std::min(items.size(), kMaxListItems);
  for (size_t i = 0; i < shown; ++i) text += (i ? ", " : "") + format(items[i]);
  if (shown < items.size()) text += ", ... (" + std::to_string(items.size()) + " values)";
  return text + "]";
}

std::string formatAttribute(const ir::Attribute& attr) {
  switch (attr.type) {
    case ir::AttributeType::FLOAT: return formatFloat(attr.f);
    case ir::AttributeType::INT: return std::to_string(attr.i);
    case ir::AttributeType::STRING: return formatString(attr.s);
    case ir::AttributeType::TENSOR: return formatTensor(attr.t);
    case ir::AttributeType::GRAPH: return formatGraph(attr.g);
    case ir::AttributeType::FLOATS: return formatList(attr.floats, formatFloat);
    case ir::AttributeType::INTS: return formatList(attr.ints, [](int64_t v) { return std::to_string(v); });
    case ir::AttributeType::STRINGS: return formatList(attr.strings, formatString);
    case ir::AttributeType::TENSORS: return formatList(attr.tensors, formatTensor);
    case ir::AttributeType::GRAPHS: return formatList(attr.graphs, formatGraph);
    case ir::AttributeType::UNDEFINED:
    case ir::AttributeType::OTHER: break;
  }
  return "?";
}

}  // namespace

Result<ModelInfo> inspectModel(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path));
  const ir::Model& model = loaded.model;
  const ir::Graph& graph = *model.graph;
  ModelInfo info;
  info.path = path;
  info.irVersion = model.irVersion;
  info.opsetImports = model.opsetImports;
  info.producerName = model.producerName;
  for (const auto& in : graph.inputs) {
    if (!graph.isInitializer(in.name)) info.inputs.push_back(ir::toValueMetadata(in));
    info.values[in.name] = ir::toValueMetadata(in);
  }
  for (const auto& out : graph.outputs) {
    info.outputs.push_back(ir::toValueMetadata(out));
    info.values[out.name] = ir::toValueMetadata(out);
  }
  for (const auto& [name, vi] : graph.valueInfo) info.values.emplace(name, ir::toValueMetadata(vi));
  for (const auto& [name, tensor] : graph.initializers) {
    ++info.initializerCount;
    info.initializerBytes += static_cast<int64_t>(tensor.byteSize());
    ValueMetadata meta;
    meta.name = name;
    meta.dtype = tensor.dtype();
    meta.hasShape = true;
    for (int64_t d : tensor.shape()) meta.shape.push_back(Dimension{d, {}});
    info.values.emplace(name, std::move(meta));
  }
  for (const auto& node : graph.nodes) {
    NodeInfo n{node.name, node.opType, node.domain, node.inputs, node.outputs, {}, {}, {}};
    for (const auto& [key, attr] : node.attributes) {
      n.attributeNames.push_back(key);
      n.attributes.emplace_back(key, formatAttribute(attr));
      if (attr.g || !attr.graphs.empty()) n.subgraphNames.push_back(key);
    }
    info.nodes.push_back(std::move(n));
  }
  return info;
}

}  // namespace kiln
