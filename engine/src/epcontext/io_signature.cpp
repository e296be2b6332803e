// epcontext/io_signature.h: an EPContext node's I/O types against its binary's record.
#include "epcontext/io_signature.h"

#include <xxhash.h>

#include "context_binary/format.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/epcontext_names.h"
#include "ir/graph_paths.h"

namespace kiln::epctx {
namespace {

// The ctx model's type of `name` in `graph`: a graph input or output, or a value shape inference typed.
const ir::ValueInfo* declaredType(const ir::Graph& graph, const std::string& name) {
  for (const auto* list : {&graph.inputs, &graph.outputs}) {
    for (const auto& value : *list) {
      if (value.name == name) return &value;
    }
  }
  const auto found = graph.valueInfo.find(name);
  return found == graph.valueInfo.end() ? nullptr : &found->second;
}

const ValueMetadata* recordedType(const std::vector<ValueMetadata>& types, const std::string& name) {
  for (const auto& type : types) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

std::string shapeText(const std::vector<Dimension>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) text += ",";
    text += shape[d].isFixed() ? std::to_string(shape[d].value) : (shape[d].param.empty() ? "?" : shape[d].param);
  }
  return text + "]";
}

std::string typeText(DataType dtype, const std::optional<std::vector<Dimension>>& shape) {
  return std::string(dataTypeName(dtype)) + (shape ? " " + shapeText(*shape) : std::string());
}

std::optional<std::string> compare(const ir::ValueInfo& actual, const ValueMetadata& compiled) {
  const std::optional<std::vector<Dimension>> compiledShape =
      compiled.hasShape ? std::optional(compiled.shape) : std::nullopt;
  const auto differs = [&] {
    return "is " + typeText(actual.dtype, actual.shape) + " in the ctx model, but its context binary was compiled for " +
           typeText(compiled.dtype, compiledShape);
  };
  if (actual.dtype != DataType::UNDEFINED && compiled.dtype != DataType::UNDEFINED && actual.dtype != compiled.dtype) {
    return differs();
  }
  if (!actual.shape || !compiledShape) return std::nullopt;
  if (actual.shape->size() != compiledShape->size()) return differs();
  for (size_t d = 0; d < actual.shape->size(); ++d) {
    const Dimension& a = (*actual.shape)[d];
    const Dimension& c = (*compiledShape)[d];
    if (a.isFixed() && c.isFixed() && a.value != c.value) return differs();
  }
  return std::nullopt;
}

void appendDeclaredIo(const ir::Graph& graph, const std::string& path, std::string& text) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (isEpContextNode(node) && isVulkanSource(node.attrString(kSource, ""))) {
      for (const auto* names : {&node.inputs, &node.outputs}) {
        for (const auto& name : *names) {
          const ir::ValueInfo* declared = nullptr;
          for (const auto* list : {&graph.inputs, &graph.outputs}) {
            for (const auto& value : *list) declared = value.name == name ? &value : declared;
          }
          if (declared) text += path + "/" + node.name + ":" + name + "=" + typeText(declared->dtype, declared->shape) + ";";
        }
      }
    }
    ir::forEachBody(node, i, path, [&](const ir::Graph& body, const std::string& bodyPath) {
      appendDeclaredIo(body, bodyPath, text);
    });
  }
}

}  // namespace

std::string declaredIoDigest(const ir::Model& model) {
  std::string text;
  appendDeclaredIo(*model.graph, ir::kMainGraphPath, text);
  return ctxbin::contentIdHex(XXH3_64bits(text.data(), text.size()));
}

std::optional<std::string> ioMismatch(const ir::Graph& graph, const ir::Node& node, const RecordedIo& recorded) {
  const std::string label = "EPContext node '" + node.name + "'";
  if (node.inputs.size() != recorded.inputs.size() || node.outputs.size() != recorded.outputs.size()) {
    return label + " has " + std::to_string(node.inputs.size()) + " inputs and " + std::to_string(node.outputs.size()) +
           " outputs, but its context binary's graph has " + std::to_string(recorded.inputs.size()) + " and " +
           std::to_string(recorded.outputs.size());
  }
  const auto check = [&](const std::vector<std::string>& names, const std::vector<std::string>& compiledNames,
                         const char* role) -> std::optional<std::string> {
    for (size_t k = 0; k < names.size(); ++k) {
      if (names[k].empty()) continue;
      const ir::ValueInfo* actual = declaredType(graph, names[k]);
      const ValueMetadata* compiled = recordedType(recorded.types, compiledNames[k]);
      if (!actual || !compiled) continue;
      if (auto reason = compare(*actual, *compiled)) return label + " " + role + " '" + names[k] + "' " + *reason;
    }
    return std::nullopt;
  };
  if (auto reason = check(node.inputs, recorded.inputs, "input")) return reason;
  return check(node.outputs, recorded.outputs, "output");
}

}  // namespace kiln::epctx
