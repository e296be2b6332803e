#include "ir/attribute_text.h"

#include "kiln/tensor.h"

namespace kiln::ir {

std::string graphText(const std::shared_ptr<Graph>& graph) {
  if (!graph) return "graph";
  return "graph '" + graph->name + "' (" + std::to_string(graph->nodes.size()) + " nodes)";
}

bool isPrintableText(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && byte != '\t') || byte == 0x7f;
  });
}

std::string tensorTypeText(const Tensor& tensor) {
  std::string text = dataTypeName(tensor.dtype());
  text += "[";
  for (size_t i = 0; i < tensor.shape().size(); ++i) text += (i ? "," : "") + std::to_string(tensor.shape()[i]);
  return text + "]";
}

std::string attributeText(const Attribute& attr, const AttributeTextStyle& style, const std::string& unknown) {
  switch (attr.type) {
    case AttributeType::FLOAT: return style.floatText(attr.f);
    case AttributeType::INT: return std::to_string(attr.i);
    case AttributeType::STRING: return style.stringText(attr.s);
    case AttributeType::TENSOR: return style.tensorText(attr.t);
    case AttributeType::GRAPH: return graphText(attr.g);
    case AttributeType::FLOATS: return listText(attr.floats, style.floatText);
    case AttributeType::INTS: return listText(attr.ints, [](int64_t v) { return std::to_string(v); });
    case AttributeType::STRINGS: return listText(attr.strings, style.stringText);
    case AttributeType::TENSORS: return listText(attr.tensors, style.tensorText);
    case AttributeType::GRAPHS: return listText(attr.graphs, graphText);
    case AttributeType::UNDEFINED:
    case AttributeType::OTHER: break;
  }
  return unknown;
}

}  // namespace kiln::ir
