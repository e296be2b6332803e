#include "onnx/model_to_proto.h"

#include "onnx/tensor_proto.h"

namespace kiln::onnx_io {
namespace {

void typeToProto(const ir::ValueInfo& info, onnx::TypeProto& type) {
  onnx::TypeProto* tensorHolder = &type;
  switch (info.kind) {
    case ir::ValueKind::SEQUENCE: tensorHolder = type.mutable_sequence_type()->mutable_elem_type(); break;
    case ir::ValueKind::OPTIONAL: tensorHolder = type.mutable_optional_type()->mutable_elem_type(); break;
    case ir::ValueKind::MAP:
    case ir::ValueKind::UNKNOWN: return;  // the IR keeps no key/value types: leave the type unset
    case ir::ValueKind::TENSOR: break;
  }
  auto* tensorType = tensorHolder->mutable_tensor_type();
  tensorType->set_elem_type(static_cast<int32_t>(info.dtype));
  if (!info.shape) return;
  auto* shape = tensorType->mutable_shape();
  for (const Dimension& d : *info.shape) {
    auto* dim = shape->add_dim();
    if (d.isFixed()) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

void valueInfoToProto(const ir::ValueInfo& info, onnx::ValueInfoProto& proto) {
  proto.set_name(info.name);
  typeToProto(info, *proto.mutable_type());
}

class Writer {
 public:
  explicit Writer(const InitializerWriter& writeInitializer) : writeInitializer_(writeInitializer) {}

  Status graph(const ir::Graph& graph, onnx::GraphProto& proto) {
    proto.set_name(graph.name);
    for (const auto& in : graph.inputs) valueInfoToProto(in, *proto.add_input());
    for (const auto& out : graph.outputs) valueInfoToProto(out, *proto.add_output());
    for (const auto& [name, info] : graph.valueInfo) valueInfoToProto(info, *proto.add_value_info());
    for (const auto& [name, tensor] : graph.initializers) {
      onnx::TensorProto* init = proto.add_initializer();
      init->set_name(name);
      if (writeInitializer_) {
        KILN_RETURN_IF_ERROR(writeInitializer_(name, tensor, *init));
      } else {
        tensorToProto(tensor, *init);
      }
    }
    for (const auto& node : graph.nodes) KILN_RETURN_IF_ERROR(this->node(node, *proto.add_node()));
    return Status::ok();
  }

 private:
  Status node(const ir::Node& node, onnx::NodeProto& proto) {
    proto.set_name(node.name);
    proto.set_op_type(node.opType);
    if (!node.domain.empty()) proto.set_domain(node.domain);
    for (const auto& in : node.inputs) proto.add_input(in);
    for (const auto& out : node.outputs) proto.add_output(out);
    for (const auto& [name, attr] : node.attributes) {
      auto status = attribute(attr, *proto.add_attribute());
      if (!status.isOk()) return status.withContext("node " + node.label());
    }
    return Status::ok();
  }

  Status attribute(const ir::Attribute& attr, onnx::AttributeProto& proto) {
    proto.set_name(attr.name);
    switch (attr.type) {
      case ir::AttributeType::FLOAT: proto.set_type(onnx::AttributeProto::FLOAT); proto.set_f(attr.f); break;
      case ir::AttributeType::INT: proto.set_type(onnx::AttributeProto::INT); proto.set_i(attr.i); break;
      case ir::AttributeType::STRING: proto.set_type(onnx::AttributeProto::STRING); proto.set_s(attr.s); break;
      case ir::AttributeType::TENSOR:
        proto.set_type(onnx::AttributeProto::TENSOR);
        tensorToProto(attr.t, *proto.mutable_t());
        break;
      case ir::AttributeType::GRAPH:
        proto.set_type(onnx::AttributeProto::GRAPH);
        KILN_RETURN_IF_ERROR(graph(*attr.g, *proto.mutable_g()));
        break;
      case ir::AttributeType::FLOATS:
        proto.set_type(onnx::AttributeProto::FLOATS);
        for (float v : attr.floats) proto.add_floats(v);
        break;
      case ir::AttributeType::INTS:
        proto.set_type(onnx::AttributeProto::INTS);
        for (int64_t v : attr.ints) proto.add_ints(v);
        break;
      case ir::AttributeType::STRINGS:
        proto.set_type(onnx::AttributeProto::STRINGS);
        for (const auto& v : attr.strings) proto.add_strings(v);
        break;
      case ir::AttributeType::TENSORS:
        proto.set_type(onnx::AttributeProto::TENSORS);
        for (const auto& t : attr.tensors) tensorToProto(t, *proto.add_tensors());
        break;
      case ir::AttributeType::GRAPHS:
        proto.set_type(onnx::AttributeProto::GRAPHS);
        for (const auto& g : attr.graphs) KILN_RETURN_IF_ERROR(graph(*g, *proto.add_graphs()));
        break;
      case ir::AttributeType::UNDEFINED:
      case ir::AttributeType::OTHER:
        return Status(StatusCode::NOT_IMPLEMENTED, "attribute '" + attr.name + "' has a type Kiln cannot write");
    }
    return Status::ok();
  }

  const InitializerWriter& writeInitializer_;
};

}  // namespace

Result<onnx::ModelProto> modelToProto(const ir::Model& model, const InitializerWriter& writeInitializer) {
  if (!model.graph) return Status(StatusCode::INVALID_GRAPH, "the model has no graph");
  onnx::ModelProto proto;
  proto.set_ir_version(model.irVersion > 0 ? model.irVersion : static_cast<int64_t>(onnx::IR_VERSION));
  proto.set_producer_name(model.producerName);
  proto.set_producer_version(model.producerVersion);
  for (const auto& [domain, version] : model.opsetImports) {
    auto* opset = proto.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  for (const auto& [key, value] : model.metadata) {
    auto* entry = proto.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }
  Writer writer(writeInitializer);
  KILN_RETURN_IF_ERROR(writer.graph(*model.graph, *proto.mutable_graph()));
  return proto;
}

}  // namespace kiln::onnx_io
