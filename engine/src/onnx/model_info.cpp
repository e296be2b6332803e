// kiln/model_info.h: a read-only description of a model for tools.
#include "kiln/model_info.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ir/attribute_text.h"
#include "ir/graph_paths.h"
#include "kiln/epcontext.h"
#include "onnx/function_inliner.h"
#include "onnx/model_loader.h"
#include "onnx/input_shapes.h"

namespace kiln {
namespace {

// Strings longer than this, or with bytes that are not printable text, show only their size.
constexpr size_t kMaxStringChars = 96;

std::string formatFloat(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
  return text;
}

std::string formatString(const std::string& text) {
  if (text.size() > kMaxStringChars || !ir::isPrintableText(text)) return "<" + std::to_string(text.size()) + " bytes>";
  return "\"" + text + "\"";
}

// A description's attribute text: floats as %g, long or binary strings by size, tensors by type and shape.
std::string formatAttribute(const ir::Attribute& attr) {
  static const ir::AttributeTextStyle kStyle{formatFloat, formatString, ir::tensorTypeText};
  return ir::attributeText(attr, kStyle, "?");
}

// Values shown in a constant's preview; the range covers every element.
constexpr int64_t kPreviewValues = 8;
constexpr int64_t kRangeSamples = 1 << 20;

// Element `i` of a numeric tensor as double; false for strings and complex types.
bool elementAsDouble(const Tensor& t, int64_t i, double* out) {
  switch (t.dtype()) {
    case DataType::FLOAT: *out = t.data<float>()[i]; return true;
    case DataType::DOUBLE: *out = t.data<double>()[i]; return true;
    case DataType::FLOAT16: *out = static_cast<float>(t.data<Float16>()[i]); return true;
    case DataType::BFLOAT16: *out = static_cast<float>(t.data<BFloat16>()[i]); return true;
    case DataType::INT8: *out = t.data<int8_t>()[i]; return true;
    case DataType::UINT8: *out = t.data<uint8_t>()[i]; return true;
    case DataType::INT16: *out = t.data<int16_t>()[i]; return true;
    case DataType::UINT16: *out = t.data<uint16_t>()[i]; return true;
    case DataType::INT32: *out = t.data<int32_t>()[i]; return true;
    case DataType::UINT32: *out = t.data<uint32_t>()[i]; return true;
    case DataType::INT64: *out = static_cast<double>(t.data<int64_t>()[i]); return true;
    case DataType::UINT64: *out = static_cast<double>(t.data<uint64_t>()[i]); return true;
    case DataType::BOOL: *out = t.data<bool>()[i] ? 1 : 0; return true;
    default: return false;
  }
}

ConstantInfo describeConstant(const std::string& name, const Tensor& t) {
  ConstantInfo c;
  c.name = name;
  c.dtype = t.dtype();
  c.shape = t.shape();
  const int64_t count = t.numel();
  if (count <= 0 || !t.defined()) return c;
  if (t.dtype() == DataType::STRING) {
    if (!t.strings()) return c;
    std::vector<std::string> shown(t.strings(), t.strings() + std::min(count, kPreviewValues));
    c.preview = ir::listText(shown, formatString);
    if (count > kPreviewValues) c.preview.insert(c.preview.size() - 1, ", ...");
    return c;
  }
  double value = 0;
  if (t.rawData() == nullptr || !elementAsDouble(t, 0, &value)) return c;
  c.hasRange = true;
  c.minimum = c.maximum = value;
  c.preview = "[";
  for (int64_t i = 0; i < std::min(count, kPreviewValues); ++i) {
    elementAsDouble(t, i, &value);
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    c.preview += (i ? ", " : "") + std::string(text);
  }
  if (count > kPreviewValues) c.preview += ", ...";
  c.preview += "]";
  // The range of a big weight tensor is taken over an evenly strided sample, so describing a 1 GB model stays fast.
  const int64_t stride = std::max<int64_t>(1, count / kRangeSamples);
  double sum = 0;
  int64_t seen = 0;
  for (int64_t i = 0; i < count; i += stride, ++seen) {
    elementAsDouble(t, i, &value);
    c.minimum = std::min(c.minimum, value);
    c.maximum = std::max(c.maximum, value);
    sum += value;
  }
  c.mean = sum / static_cast<double>(seen);
  return c;
}

NodeInfo describeNode(const ir::Graph& graph, const ir::Node& node) {
  NodeInfo n{node.name, node.opType, node.domain, node.inputs, node.outputs, {}, {}, {}};
  for (const auto& [key, attr] : node.attributes) {
    n.attributeNames.push_back(key);
    n.attributes.emplace_back(key, formatAttribute(attr));
    if (attr.g || !attr.graphs.empty()) n.subgraphNames.push_back(key);
  }
  if (ir::hasSubgraphs(node)) n.implicitInputs = graph.implicitInputs(node);
  return n;
}

// A model-local function: its proto (for attribute references) and its body as a graph.
struct LocalFunction {
  const onnx::FunctionProto* proto = nullptr;
  std::shared_ptr<ir::Graph> body;
};
using LocalFunctions = std::map<std::string, LocalFunction>;  // by "domain:name"

// Calls nest at most this deep in descriptions (a function calling itself is described this far), and at most this
// many function bodies are described (calls that fan out level after level would multiply them).
constexpr int kMaxFunctionDepth = 8;
constexpr int kMaxFunctionBodies = 4096;

int functionBodyCount(const ModelInfo& info) {
  int count = 0;
  for (const auto& sub : info.subgraphs) count += sub.function.empty() ? 0 : 1;
  return count;
}

// The body of `function` as a graph: its nodes, formal inputs and outputs (untyped: types come from each call).
Result<std::shared_ptr<ir::Graph>> functionBody(const onnx::FunctionProto& function) {
  onnx::ModelProto holder;
  for (const auto& opset : function.opset_import()) *holder.add_opset_import() = opset;
  onnx::GraphProto& graph = *holder.mutable_graph();
  graph.set_name(onnx_io::functionId(function.domain(), function.name()));
  for (const auto& input : function.input()) graph.add_input()->set_name(input);
  for (const auto& output : function.output()) graph.add_output()->set_name(output);
  *graph.mutable_node() = function.node();
  KILN_ASSIGN_OR_RETURN(ir::Model model, onnx_io::modelFromProto(holder));
  return model.graph;
}

// Formal values of a function typed as the call's actual ones (the name stays the formal one).
std::vector<ValueMetadata> formalValues(const google::protobuf::RepeatedPtrField<std::string>& formal,
                                        const std::vector<std::string>& actual, const ModelInfo& info) {
  std::vector<ValueMetadata> values;
  for (int i = 0; i < formal.size(); ++i) {
    ValueMetadata meta;
    if (static_cast<size_t>(i) < actual.size()) {
      auto it = info.values.find(actual[static_cast<size_t>(i)]);
      if (it != info.values.end()) meta = it->second;
    }
    meta.name = formal[i];
    values.push_back(std::move(meta));
  }
  return values;
}

// Attributes of a function body's nodes that refer to the call's: "@alpha = 0.5", as the call sets them.
void describeAttributeReferences(const onnx::FunctionProto& function, const NodeInfo& call,
                                 std::vector<NodeInfo>* nodes) {
  for (NodeInfo& node : *nodes) {
    for (int index = 0; index < function.node_size(); ++index) {
      const onnx::NodeProto& proto = function.node(index);
      if (proto.name() != node.name || proto.op_type() != node.opType) continue;
      for (const auto& attr : proto.attribute()) {
        if (attr.ref_attr_name().empty()) continue;
        std::string text = "@" + attr.ref_attr_name() + " (not set by the call)";
        for (const auto& [name, value] : call.attributes) {
          if (name == attr.ref_attr_name()) text = "@" + attr.ref_attr_name() + " = " + value;
        }
        for (auto& [name, value] : node.attributes) {
          if (name == attr.name()) value = text;
        }
      }
      break;
    }
  }
}

// Types, constants and nodes of `graph`; its bodies (and the bodies of the local functions it calls) go to
// info.subgraphs, depth-first.
void describeGraphContents(const ir::Graph& graph, const std::string& path, std::vector<NodeInfo>* nodes,
                           ModelInfo* info, const LocalFunctions& functions, int functionDepth) {
  for (const auto& [name, vi] : graph.valueInfo) info->values.emplace(name, ir::toValueMetadata(vi));
  for (const auto& [name, tensor] : graph.initializers) {
    info->constants.emplace(name, describeConstant(name, tensor));
    ValueMetadata meta;  // a body's initializers have types too (the main graph's are listed by inspectModel)
    meta.name = name;
    meta.dtype = tensor.dtype();
    meta.hasShape = true;
    for (int64_t d : tensor.shape()) meta.shape.push_back(Dimension{d, {}});
    info->values.emplace(name, std::move(meta));
  }
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const ir::Node& node = graph.nodes[index];
    nodes->push_back(describeNode(graph, node));
    if (node.opType == "Constant" && node.outputs.size() == 1) {
      const ir::Attribute* value = node.attribute("value");
      if (value && value->type == ir::AttributeType::TENSOR) {
        info->constants.emplace(node.outputs[0], describeConstant(node.outputs[0], value->t));
      }
    }
    ir::forEachBody(node, index, path, [&](const ir::Graph& body, const std::string& bodyPath) {
      SubgraphInfo sub;
      sub.path = bodyPath;
      sub.parentPath = path;
      sub.ownerNode = ir::nodePathName(node, index);
      sub.ownerIndex = static_cast<int64_t>(index);
      sub.attribute = bodyPath.substr(path.size() + 1 + sub.ownerNode.size() + 1);
      for (const auto& in : body.inputs) {
        if (body.isInitializer(in.name)) continue;
        sub.inputs.push_back(ir::toValueMetadata(in));
        info->values.emplace(in.name, ir::toValueMetadata(in));
      }
      for (const auto& out : body.outputs) {
        sub.outputs.push_back(ir::toValueMetadata(out));
        info->values.emplace(out.name, ir::toValueMetadata(out));
      }
      // What the body reads from outside: the free names of a node owning just this body (a non-owning alias,
      // which implicitInputs only reads).
      ir::Node holder;
      holder.attributes["body"].g = std::shared_ptr<ir::Graph>(std::shared_ptr<ir::Graph>{}, const_cast<ir::Graph*>(&body));  // NOLINT
      sub.outerScopeInputs = graph.implicitInputs(holder);
      const size_t slot = info->subgraphs.size();
      info->subgraphs.push_back(std::move(sub));
      std::vector<NodeInfo> bodyNodes;
      describeGraphContents(body, bodyPath, &bodyNodes, info, functions, functionDepth);
      info->subgraphs[slot].nodes = std::move(bodyNodes);
    });
    const std::string id = onnx_io::functionId(node.domain, node.opType);
    auto function = functions.find(id);
    if (function == functions.end() || !function->second.body) continue;
    nodes->back().localFunction = id;
    if (functionDepth >= kMaxFunctionDepth || functionBodyCount(*info) >= kMaxFunctionBodies) continue;
    SubgraphInfo sub;
    sub.ownerNode = ir::nodePathName(node, index);
    sub.path = path + "/" + sub.ownerNode + "." + id;
    sub.parentPath = path;
    sub.ownerIndex = static_cast<int64_t>(index);
    sub.attribute = id;
    sub.function = id;
    sub.inputs = formalValues(function->second.proto->input(), node.inputs, *info);
    sub.outputs = formalValues(function->second.proto->output(), node.outputs, *info);
    const size_t slot = info->subgraphs.size();
    const NodeInfo call = nodes->back();
    info->subgraphs.push_back(std::move(sub));
    std::vector<NodeInfo> bodyNodes;
    describeGraphContents(*function->second.body, info->subgraphs[slot].path, &bodyNodes, info, functions,
                          functionDepth + 1);
    describeAttributeReferences(*function->second.proto, call, &bodyNodes);
    info->subgraphs[slot].nodes = std::move(bodyNodes);
  }
}

// Writes the resolved input shapes' fixed dimensions into the proto's graph inputs, before shape inference.
void fixInputDims(onnx::GraphProto& graph, const std::vector<ValueMetadata>& inputs) {
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    const auto resolved = std::find_if(inputs.begin(), inputs.end(),
                                       [&input](const ValueMetadata& v) { return v.name == input.name(); });
    if (resolved == inputs.end() || !resolved->hasShape || !input.type().has_tensor_type()) continue;
    onnx::TensorShapeProto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    while (shape->dim_size() < static_cast<int>(resolved->shape.size())) shape->add_dim();
    for (size_t i = 0; i < resolved->shape.size(); ++i) {
      if (!resolved->shape[i].isFixed()) continue;
      shape->mutable_dim(static_cast<int>(i))->set_dim_value(resolved->shape[i].value);
    }
  }
}

bool hasEpContextNodes(const onnx::GraphProto& graph) {
  return std::any_of(graph.node().begin(), graph.node().end(),
                     [](const onnx::NodeProto& node) { return isEpContextNode(node.op_type(), node.domain()); });
}

// Describes `loaded` as written: calls of local functions stay calls, each function's body under its call (load it
// with inlineLocalFunctions off).
ModelInfo describeModel(const std::string& path, const onnx_io::LoadedModel& loaded) {
  LocalFunctions functions;
  for (const auto& function : loaded.proto.functions()) {
    auto body = functionBody(function);
    // A body that does not convert leaves its calls plain nodes (running the model reports why).
    const std::string id = onnx_io::functionId(function.domain(), function.name());
    functions[id] = {&function, body.isOk() ? body.value() : nullptr};
  }
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
  describeGraphContents(graph, ir::kMainGraphPath, &info.nodes, &info, functions, 0);
  return info;
}

}  // namespace

Result<ModelInfo> inspectModel(const std::string& path) {
  onnx_io::LoadOptions load;
  load.inlineLocalFunctions = false;  // described as written: calls, and each function's body under its call
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, load));
  return describeModel(path, loaded);
}

Result<ModelInfo> inspectModel(const std::string& path,
                               const std::map<std::string, std::vector<int64_t>>& inputShapes) {
  if (inputShapes.empty()) return inspectModel(path);
  onnx_io::LoadOptions load;
  load.runShapeInference = false;  // once, below, with the given shapes
  load.inlineLocalFunctions = false;
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, load));
  // Checked as a session checks SessionOptions::setInputShape: the same messages for the same mistakes.
  InputShapeRequest request;
  request.shapes = inputShapes;
  KILN_ASSIGN_OR_RETURN(const std::vector<ValueMetadata> inputs, resolveInputShapes(*loaded.model.graph, request));
  fixInputDims(*loaded.proto.mutable_graph(), inputs);
  if (!hasEpContextNodes(loaded.proto.graph())) onnx_io::inferShapes(loaded.proto);  // as loadModelFile does
  KILN_ASSIGN_OR_RETURN(loaded.model, onnx_io::modelFromProto(loaded.proto));
  return describeModel(path, loaded);
}

}  // namespace kiln
