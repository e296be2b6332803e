// onnx::ModelProto → ir::Model.
#include "onnx/model_loader.h"
#include "onnx/tensor_proto.h"

namespace kiln::onnx_io {
namespace {

Result<std::shared_ptr<ir::Graph>> graphFromProto(const onnx::GraphProto& proto, const std::vector<std::string>& outer,
                                                  const std::set<std::string>& deferred = {});

ir::ValueInfo valueInfoFromProto(const onnx::ValueInfoProto& proto) {
  ir::ValueInfo info;
  info.name = proto.name();
  const onnx::TypeProto* type = &proto.type();
  switch (type->value_case()) {
    case onnx::TypeProto::kTensorType: info.kind = ir::ValueKind::TENSOR; break;
    case onnx::TypeProto::kSequenceType:
      info.kind = ir::ValueKind::SEQUENCE;
      type = &type->sequence_type().elem_type();
      break;
    case onnx::TypeProto::kOptionalType:
      info.kind = ir::ValueKind::OPTIONAL;
      type = &type->optional_type().elem_type();
      break;
    case onnx::TypeProto::kMapType: info.kind = ir::ValueKind::MAP; return info;
    default: info.kind = ir::ValueKind::UNKNOWN; return info;
  }
  if (!type->has_tensor_type()) return info;
  const auto& tensorType = type->tensor_type();
  info.dtype = dataTypeFromOnnx(tensorType.elem_type());
  if (tensorType.has_shape()) {
    std::vector<Dimension> dims;
    for (const auto& d : tensorType.shape().dim()) {
      Dimension dim;
      if (d.has_dim_value()) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.param = d.dim_param();
      dims.push_back(std::move(dim));
    }
    info.shape = std::move(dims);
  }
  return info;
}

Result<ir::Attribute> attributeFromProto(const onnx::AttributeProto& proto, const std::vector<std::string>& scope) {
  ir::Attribute attr;
  attr.name = proto.name();
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT: attr.type = ir::AttributeType::FLOAT; attr.f = proto.f(); break;
    case onnx::AttributeProto::INT: attr.type = ir::AttributeType::INT; attr.i = proto.i(); break;
    case onnx::AttributeProto::STRING: attr.type = ir::AttributeType::STRING; attr.s = proto.s(); break;
    case onnx::AttributeProto::TENSOR: {
      attr.type = ir::AttributeType::TENSOR;
      KILN_ASSIGN_OR_RETURN(attr.t, tensorFromProto(proto.t()));
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      attr.type = ir::AttributeType::GRAPH;
      KILN_ASSIGN_OR_RETURN(attr.g, graphFromProto(proto.g(), scope));
      break;
    }
    case onnx::AttributeProto::FLOATS:
      attr.type = ir::AttributeType::FLOATS;
      attr.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      attr.type = ir::AttributeType::INTS;
      attr.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      attr.type = ir::AttributeType::STRINGS;
      attr.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSORS:
      attr.type = ir::AttributeType::TENSORS;
      for (const auto& t : proto.tensors()) {
        KILN_ASSIGN_OR_RETURN(Tensor tensor, tensorFromProto(t));
        attr.tensors.push_back(std::move(tensor));
      }
      break;
    case onnx::AttributeProto::GRAPHS:
      attr.type = ir::AttributeType::GRAPHS;
      for (const auto& g : proto.graphs()) {
        KILN_ASSIGN_OR_RETURN(auto graph, graphFromProto(g, scope));
        attr.graphs.push_back(std::move(graph));
      }
      break;
    default: attr.type = ir::AttributeType::OTHER; break;
  }
  return attr;
}

bool isFourBit(int32_t elemType) { return elemType == kOnnxInt4 || elemType == kOnnxUint4; }

// int4/uint4 initializers are held widened to 8 bits (tensor_proto.h), which is exact only where the value is read
// as a number: DequantizeLinear's x and x_zero_point. Anywhere else (a QuantizeLinear zero point, which sets the
// output type and range; a graph input or output) the widening would change the answer, so it is refused.
Status checkFourBitUses(const onnx::GraphProto& proto, const ir::Graph& graph) {
  for (const auto* values : {&proto.input(), &proto.output()}) {
    for (const auto& value : *values) {
      if (value.type().has_tensor_type() && isFourBit(value.type().tensor_type().elem_type())) {
        return Status(StatusCode::NOT_IMPLEMENTED, "graph input or output '" + value.name() +
                                                       "' is int4/uint4: Kiln runs 4-bit tensors only as "
                                                       "DequantizeLinear initializers");
      }
    }
  }
  std::set<std::string> fourBit;
  for (const auto& init : proto.initializer()) {
    if (isFourBit(init.data_type())) fourBit.insert(init.name());
  }
  if (fourBit.empty()) return Status::ok();
  for (const auto& node : graph.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!fourBit.count(node.inputs[i])) continue;
      if (node.domain.empty() && node.opType == "DequantizeLinear" && (i == 0 || i == 2)) continue;
      return Status(StatusCode::NOT_IMPLEMENTED, "int4/uint4 initializer '" + node.inputs[i] + "' feeds " +
                                                     node.label() + ": Kiln runs 4-bit tensors only as "
                                                     "DequantizeLinear inputs");
    }
  }
  return Status::ok();
}

Result<std::shared_ptr<ir::Graph>> graphFromProto(const onnx::GraphProto& proto, const std::vector<std::string>& outer,
                                                  const std::set<std::string>& deferred) {
  auto graph = std::make_shared<ir::Graph>();
  graph->name = proto.name();
  if (proto.sparse_initializer_size() > 0) {
    return Status(StatusCode::NOT_IMPLEMENTED, "graph '" + proto.name() + "' has sparse initializers");
  }
  for (const auto& init : proto.initializer()) {
    if (deferred.count(init.name())) {  // type and shape only: the bytes stay in the external-data file
      graph->initializers[init.name()] = Tensor::wrap(dataTypeFromOnnx(init.data_type()),
                                                      Shape(init.dims().begin(), init.dims().end()), nullptr);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Tensor tensor, tensorFromProto(init));
    graph->initializers[init.name()] = std::move(tensor);
  }
  for (const auto& in : proto.input()) graph->inputs.push_back(valueInfoFromProto(in));
  for (const auto& out : proto.output()) graph->outputs.push_back(valueInfoFromProto(out));
  for (const auto& vi : proto.value_info()) graph->valueInfo[vi.name()] = valueInfoFromProto(vi);

  // Names visible inside this graph's subgraphs: everything visible outside plus what this graph defines.
  std::vector<std::string> scope = outer;
  for (const auto& in : proto.input()) scope.push_back(in.name());
  for (const auto& init : proto.initializer()) scope.push_back(init.name());
  for (const auto& node : proto.node()) scope.insert(scope.end(), node.output().begin(), node.output().end());

  graph->nodes.reserve(static_cast<size_t>(proto.node_size()));
  for (const auto& nodeProto : proto.node()) {
    ir::Node node;
    node.name = nodeProto.name();
    node.opType = nodeProto.op_type();
    node.domain = nodeProto.domain() == "ai.onnx" ? "" : nodeProto.domain();
    node.inputs.assign(nodeProto.input().begin(), nodeProto.input().end());
    node.outputs.assign(nodeProto.output().begin(), nodeProto.output().end());
    for (const auto& attrProto : nodeProto.attribute()) {
      auto attr = attributeFromProto(attrProto, scope);
      if (!attr.isOk()) return attr.status().withContext("node " + node.label());
      node.attributes[attrProto.name()] = std::move(attr).value();
    }
    graph->nodes.push_back(std::move(node));
  }
  KILN_RETURN_IF_ERROR(checkFourBitUses(proto, *graph));
  KILN_RETURN_IF_ERROR(ir::sortTopologically(*graph, outer));
  return graph;
}

}  // namespace

Result<ir::Model> modelFromProto(const onnx::ModelProto& proto, const std::set<std::string>& deferred) {
  ir::Model model;
  model.irVersion = proto.ir_version();
  model.producerName = proto.producer_name();
  model.producerVersion = proto.producer_version();
  for (const auto& opset : proto.opset_import()) {
    const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    model.opsetImports[domain] = opset.version();
  }
  if (proto.opset_import_size() == 0 && proto.ir_version() < 3) model.opsetImports[""] = 1;
  for (const auto& entry : proto.metadata_props()) model.metadata.emplace_back(entry.key(), entry.value());
  if (!proto.has_graph()) return Status(StatusCode::INVALID_GRAPH, "the model has no graph");
  KILN_ASSIGN_OR_RETURN(model.graph, graphFromProto(proto.graph(), {}, deferred));
  return model;
}

}  // namespace kiln::onnx_io
