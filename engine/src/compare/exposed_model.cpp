#include "compare/exposed_model.h"

#include <cstdlib>
#include <filesystem>

#include "kiln/tensor.h"
#include "onnx/model_loader.h"
#include "onnx/tensor_proto.h"

namespace kiln::compare {
namespace {

void recordType(const onnx::ValueInfoProto& info, std::map<std::string, ValueType>& types) {
  if (!info.type().has_tensor_type() || info.type().tensor_type().elem_type() == 0) return;
  const auto& tensorType = info.type().tensor_type();
  ValueType type{tensorType.elem_type(), -1};
  const size_t elementSize = dataTypeSize(onnx_io::dataTypeFromOnnx(type.elemType));
  if (tensorType.has_shape() && elementSize > 0) {
    int64_t count = 1;
    for (const auto& dim : tensorType.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        count = -1;
        break;
      }
      count *= dim.dim_value();
    }
    if (count >= 0) type.bytes = count * static_cast<int64_t>(elementSize);
  }
  auto [it, added] = types.emplace(info.name(), type);
  if (!added && it->second.bytes < 0) it->second = type;  // a later, fuller record wins over a type-only one
}

// The If/Loop bodies of top-level node `index` whose values can be exposed: the node must list one output per body
// output (Loop: besides the condition), so an appended output lines up with the node's.
std::vector<const onnx::AttributeProto*> exposableBodies(const onnx::NodeProto& node) {
  std::vector<const onnx::AttributeProto*> bodies;
  if (!node.domain().empty() || (node.op_type() != "If" && node.op_type() != "Loop")) return bodies;
  for (const auto& attribute : node.attribute()) {
    if (!attribute.has_g()) continue;
    const int expected = node.output_size() + (node.op_type() == "Loop" ? 1 : 0);
    if (attribute.g().output_size() != expected) return {};
    bodies.push_back(&attribute);
  }
  return bodies;
}

// Records the types of the values of the exposable bodies of `graph`'s nodes (`sized`: its shape-inferred copy),
// recursively; `path` leads to `graph`.
void recordBodyValues(const onnx::GraphProto& sized, const BodyValue& path, SourceModel& source) {
  for (int i = 0; i < sized.node_size(); ++i) {
    for (const onnx::AttributeProto* attribute : exposableBodies(sized.node(i))) {
      const onnx::GraphProto& body = attribute->g();
      for (const auto& info : body.value_info()) recordType(info, source.types);
      for (const auto& info : body.output()) recordType(info, source.types);
      BodyValue inner = path;
      inner.push_back(BodyStep{i, attribute->name()});
      source.bodyNodesExposable += body.node_size();
      for (const auto& node : body.node()) {
        for (const auto& out : node.output()) {
          if (!out.empty() && source.types.count(out)) source.bodyValues[out] = inner;
        }
      }
      recordBodyValues(body, inner, source);
    }
  }
}

// Adds `value` (computed in body `owner.<attributeName>`) as a last output of `owner` named `outer`.
void exposeBodyValue(onnx::NodeProto& owner, const std::string& attributeName, const std::string& value,
                     int32_t elemType, const std::string& outer) {
  for (auto& attribute : *owner.mutable_attribute()) {
    if (!attribute.has_g()) continue;
    onnx::GraphProto* body = attribute.mutable_g();
    onnx::ValueInfoProto* out = body->add_output();
    out->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    if (attribute.name() == attributeName) {
      // A value the body already returns goes out through a copy: onnxruntime mishandles a subgraph that lists
      // one value as two outputs (both read as zeros).
      bool returned = false;
      for (int k = 0; k + 1 < body->output_size(); ++k) returned = returned || body->output(k).name() == value;
      out->set_name(returned ? outer + "/copy" : value);
      if (returned) {
        onnx::NodeProto* copy = body->add_node();
        copy->set_op_type("Identity");
        copy->add_input(value);
        copy->add_output(out->name());
      }
      continue;
    }
    // The other branch of an If: an empty tensor of the same element type.
    const std::string absent = outer + "/absent_in_" + attribute.name();
    onnx::NodeProto* constant = body->add_node();
    constant->set_op_type("Constant");
    constant->add_output(absent);
    onnx::AttributeProto* tensor = constant->add_attribute();
    tensor->set_name("value");
    tensor->set_type(onnx::AttributeProto::TENSOR);
    tensor->mutable_t()->set_data_type(elemType);
    tensor->mutable_t()->add_dims(0);
    out->set_name(absent);
  }
  owner.add_output(outer);
}

}  // namespace

Result<SourceModel> loadSourceModel(const std::string& path, const std::vector<NamedTensor>& inputs) {
  onnx_io::LoadOptions options;
  options.runShapeInference = false;
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, options));
  SourceModel source;
  source.proto = std::move(loaded.proto);
  std::map<std::string, int> producer;
  for (int i = 0; i < source.proto.graph().node_size(); ++i) {
    for (const auto& out : source.proto.graph().node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  for (const auto& node : loaded.model.graph->nodes) {
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      if (auto it = producer.find(out); it != producer.end()) source.topologicalOrder.push_back(it->second);
      break;
    }
  }
  // Shape inference on a copy whose inputs have the actual shapes: sizes for chunking, types for the outputs.
  onnx::ModelProto sized = source.proto;
  for (auto& input : *sized.mutable_graph()->mutable_input()) {
    for (const auto& given : inputs) {
      if (given.name != input.name() || !input.type().has_tensor_type()) continue;
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : given.tensor.shape()) shape->add_dim()->set_dim_value(d);
    }
  }
  onnx_io::inferShapes(sized);
  for (const auto& info : sized.graph().input()) recordType(info, source.types);
  for (const auto& info : sized.graph().output()) recordType(info, source.types);
  for (const auto& info : sized.graph().value_info()) recordType(info, source.types);
  for (const auto& info : source.proto.graph().value_info()) recordType(info, source.types);
  recordBodyValues(sized.graph(), {}, source);
  for (const auto& init : source.proto.graph().initializer()) {
    int64_t count = 1;
    for (int64_t d : init.dims()) count *= d;
    source.types.emplace(init.name(),
                         ValueType{init.data_type(), count * static_cast<int64_t>(dataTypeSize(
                                                                 onnx_io::dataTypeFromOnnx(init.data_type())))});
  }
  return source;
}

ExposedModel withOutputs(const SourceModel& source, const std::vector<std::string>& values) {
  ExposedModel exposed{source.proto, {}};
  auto* graph = exposed.proto.mutable_graph();
  graph->clear_output();
  for (const auto& value : values) {
    const auto type = source.types.find(value);
    const int32_t elemType = type != source.types.end() ? type->second.elemType : 0;
    std::string name = value;
    if (auto body = source.bodyValues.find(value); body != source.bodyValues.end()) {
      // The owners along the path, outermost first; the value climbs out from the innermost.
      std::vector<onnx::NodeProto*> owners;
      onnx::GraphProto* scope = graph;
      for (const BodyStep& step : body->second) {
        owners.push_back(scope->mutable_node(step.node));
        for (auto& attribute : *owners.back()->mutable_attribute()) {
          if (attribute.name() == step.attribute) scope = attribute.mutable_g();
        }
      }
      for (size_t depth = owners.size(); depth-- > 0;) {
        const std::string outer = "kiln_exposed" + std::to_string(depth) + "/" + value;
        exposeBodyValue(*owners[depth], body->second[depth].attribute, name, elemType, outer);
        name = outer;
      }
    }
    auto* info = graph->add_output();
    info->set_name(name);
    if (elemType != 0) info->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    exposed.outputNames.push_back(name);
  }
  return exposed;
}

const onnx::TensorProto* findWeight(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& init : graph.initializer()) {
    if (init.name() == name) return &init;
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.domain().empty() && node.output_size() == 1 && node.output(0) == name) {
      for (const auto& attribute : node.attribute()) {
        if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
      }
    }
    for (const auto& attribute : node.attribute()) {  // a body node's weights live in its body
      if (!attribute.has_g()) continue;
      if (const onnx::TensorProto* found = findWeight(attribute.g(), name)) return found;
    }
  }
  return nullptr;
}

std::string nodeName(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  return node.output_size() > 0 ? node.output(0) : node.op_type();
}

TempFolder::~TempFolder() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Status TempFolder::create() {
  std::error_code error;
  std::string pattern = (std::filesystem::temp_directory_path(error) / "kiln-compare-XXXXXX").string();
  if (error) pattern = "/tmp/kiln-compare-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    return Status(StatusCode::FAIL, "cannot create a temporary folder like '" + pattern + "'");
  }
  path_ = pattern;
  return Status::ok();
}

}  // namespace kiln::compare
