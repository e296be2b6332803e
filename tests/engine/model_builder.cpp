#include "model_builder.h"

#include "test_models.h"

#include "kiln/tensor.h"

namespace kiln::testing {
namespace {

void setType(onnx::ValueInfoProto* value, const std::string& name, const std::vector<int64_t>& dims, int32_t elemType) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  if (dims.empty()) return;
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    if (d >= 0) shape->add_dim()->set_dim_value(d);
    else shape->add_dim()->set_dim_param("N");
  }
}

onnx::AttributeProto* addAttribute(onnx::NodeProto& node, const std::string& name,
                                   onnx::AttributeProto::AttributeType type) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return attr;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string name) { graph_.set_name(std::move(name)); }

GraphBuilder& GraphBuilder::input(const std::string& name, const std::vector<int64_t>& dims, int32_t elemType) {
  setType(graph_.add_input(), name, dims, elemType);
  return *this;
}

GraphBuilder& GraphBuilder::output(const std::string& name, const std::vector<int64_t>& dims, int32_t elemType) {
  setType(graph_.add_output(), name, dims, elemType);
  return *this;
}

GraphBuilder& GraphBuilder::initializer(const std::string& name, const std::vector<int64_t>& dims,
                                        const std::vector<float>& values) {
  *graph_.add_initializer() = floatTensor(name, dims, values);
  return *this;
}

void initializer(GraphBuilder& graph, const std::string& name, const std::vector<int64_t>& dims, int32_t type,
                 const std::vector<double>& values) {
  onnx::TensorProto& t = *graph.proto().add_initializer();
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto::FLOAT)
      t.add_float_data(static_cast<float>(v));
    else if (type == onnx::TensorProto::INT64)
      t.add_int64_data(static_cast<int64_t>(v));
    else
      t.add_int32_data(static_cast<int32_t>(v));
  }
}

void initializer(GraphBuilder& graph, const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<float>& values, int32_t type) {
  onnx::TensorProto& t = *graph.proto().add_initializer();
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) {
    if (type == onnx::TensorProto::FLOAT16) {
      t.add_int32_data(Float16(v).bits);
    } else {
      t.add_float_data(v);
    }
  }
}

onnx::NodeProto& GraphBuilder::node(const std::string& opType, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& name) {
  auto* node = graph_.add_node();
  node->set_op_type(opType);
  node->set_name(name);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return *node;
}

onnx::NodeProto& GraphBuilder::constant(const std::string& output, const std::vector<int64_t>& dims,
                                        const std::vector<float>& values, const std::string& name) {
  onnx::NodeProto& node = this->node("Constant", {}, {output}, name);
  attrTensor(node, "value", floatTensor("", dims, values));
  return node;
}

ModelBuilder& ModelBuilder::opsetImport(const std::string& domain, int64_t version) {
  extraOpsets_.emplace_back(domain, version);
  return *this;
}

onnx::ModelProto ModelBuilder::build() const {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset_);
  for (const auto& [domain, version] : extraOpsets_) {
    auto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  *model.mutable_graph() = proto();
  return model;
}

std::string ModelBuilder::save(const std::string& path) const {
  writeBytes(path, build().SerializeAsString());
  return path;
}

onnx::TensorProto floatTensor(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor.add_dims(d);
  for (float v : values) tensor.add_float_data(v);
  return tensor;
}

void attrInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  addAttribute(node, name, onnx::AttributeProto::INT)->set_i(value);
}

void attrInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attr = addAttribute(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void attrFloat(onnx::NodeProto& node, const std::string& name, float value) {
  addAttribute(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}

void attrString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  addAttribute(node, name, onnx::AttributeProto::STRING)->set_s(value);
}

void attrTensor(onnx::NodeProto& node, const std::string& name, const onnx::TensorProto& value) {
  *addAttribute(node, name, onnx::AttributeProto::TENSOR)->mutable_t() = value;
}

void attrGraph(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& value) {
  *addAttribute(node, name, onnx::AttributeProto::GRAPH)->mutable_g() = value;
}

}  // namespace kiln::testing
