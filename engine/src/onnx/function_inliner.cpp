// onnx/function_inliner.h: inlining model-local functions at load.
#include "onnx/function_inliner.h"

#include <map>
#include <string>

namespace kiln::onnx_io {
namespace {

constexpr int kMaxDepth = 32;
// Inlining may multiply nodes (a function calling another twice, level after level): a graph past this many
// nodes is refused rather than grown without bound.
constexpr int kMaxInlinedNodes = 1 << 20;

using FunctionMap = std::map<std::string, const onnx::FunctionProto*>;

// Renames every name in `graph` (node inputs, outputs, nested bodies) found in `names`.
void renameInGraph(onnx::GraphProto& graph, const std::map<std::string, std::string>& names);

void renameInNode(onnx::NodeProto& node, const std::map<std::string, std::string>& names) {
  for (auto& input : *node.mutable_input()) {
    auto it = names.find(input);
    if (it != names.end()) input = it->second;
  }
  for (auto& output : *node.mutable_output()) {
    auto it = names.find(output);
    if (it != names.end()) output = it->second;
  }
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.has_g()) renameInGraph(*attr.mutable_g(), names);
    for (auto& g : *attr.mutable_graphs()) renameInGraph(g, names);
  }
}

void renameInGraph(onnx::GraphProto& graph, const std::map<std::string, std::string>& names) {
  for (auto& node : *graph.mutable_node()) renameInNode(node, names);
  for (auto& out : *graph.mutable_output()) {
    auto it = names.find(out.name());
    if (it != names.end()) out.set_name(it->second);
  }
}

// The nodes call `call` (named `callName`) stands for.
std::vector<onnx::NodeProto> expandCall(const onnx::NodeProto& call, const std::string& callName,
                                        const onnx::FunctionProto& function) {
  const std::string prefix = inlinedPrefix(callName);
  std::map<std::string, std::string> names;
  for (int i = 0; i < function.input_size(); ++i)
    names[function.input(i)] = i < call.input_size() ? call.input(i) : "";
  for (int i = 0; i < function.output_size(); ++i) {
    names[function.output(i)] = i < call.output_size() ? call.output(i) : prefix + function.output(i);
  }
  for (const auto& node : function.node()) {
    for (const auto& output : node.output()) {
      if (!output.empty() && !names.count(output)) names[output] = prefix + output;
    }
  }
  std::map<std::string, const onnx::AttributeProto*> given;
  for (const auto& attr : call.attribute()) given[attr.name()] = &attr;
  std::vector<onnx::NodeProto> nodes;
  for (int index = 0; index < function.node_size(); ++index) {
    onnx::NodeProto node = function.node(index);
    node.set_name(prefix +
                  (node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name()));
    renameInNode(node, names);
    auto* attrs = node.mutable_attribute();
    for (int a = attrs->size() - 1; a >= 0; --a) {
      onnx::AttributeProto& attr = attrs->at(a);
      if (attr.ref_attr_name().empty()) continue;
      auto it = given.find(attr.ref_attr_name());
      if (it == given.end()) {
        attrs->DeleteSubrange(a, 1);  // not given: the op's own default applies
        continue;
      }
      const std::string name = attr.name();
      attr = *it->second;
      attr.set_name(name);
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Status inlineGraph(onnx::GraphProto& graph, const FunctionMap& functions, int depth) {
  if (depth > kMaxDepth) {
    return Status(StatusCode::INVALID_GRAPH, "model-local functions nest more than " +
                                                 std::to_string(kMaxDepth) +
                                                 " levels deep (a function that calls itself?)");
  }
  bool expanded = false;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> result;
  for (int index = 0; index < graph.node_size(); ++index) {
    onnx::NodeProto& node = *graph.mutable_node(index);
    auto it = functions.find(functionId(node.domain(), node.op_type()));
    if (it == functions.end()) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_g()) KILN_RETURN_IF_ERROR(inlineGraph(*attr.mutable_g(), functions, 0));
        for (auto& g : *attr.mutable_graphs()) KILN_RETURN_IF_ERROR(inlineGraph(g, functions, 0));
      }
      *result.Add() = std::move(node);
      continue;
    }
    expanded = true;
    if (result.size() + it->second->node_size() > kMaxInlinedNodes) {
      return Status(StatusCode::INVALID_GRAPH, "inlining model-local functions makes graph '" + graph.name() +
                                                   "' larger than " + std::to_string(kMaxInlinedNodes) +
                                                   " nodes");
    }
    const std::string callName =
        node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    for (auto& inlined : expandCall(node, callName, *it->second)) *result.Add() = std::move(inlined);
  }
  graph.mutable_node()->Swap(&result);
  // Calls inside the inlined nodes are inlined in turn, one level deeper.
  return expanded ? inlineGraph(graph, functions, depth + 1) : Status::ok();
}

}  // namespace

std::string functionId(const std::string& domain, const std::string& name) { return domain + ":" + name; }

std::string inlinedPrefix(const std::string& callName) { return callName + "/"; }

Status inlineLocalFunctions(onnx::ModelProto& model) {
  if (model.functions_size() == 0) return Status::ok();
  FunctionMap functions;
  for (const auto& function : model.functions())
    functions[functionId(function.domain(), function.name())] = &function;
  KILN_RETURN_IF_ERROR(inlineGraph(*model.mutable_graph(), functions, 0));
  std::map<std::string, int64_t> imported;
  for (const auto& opset : model.opset_import()) imported[opset.domain()] = opset.version();
  for (const auto& function : model.functions()) {
    for (const auto& opset : function.opset_import()) {
      if (imported.count(opset.domain())) continue;
      *model.add_opset_import() = opset;
      imported[opset.domain()] = opset.version();
    }
  }
  model.clear_functions();
  return Status::ok();
}

}  // namespace kiln::onnx_io
