#include "test_models.h"

#include <fstream>
#include <random>

namespace kiln::testing {

TempDir::TempDir() {
  std::random_device random;
  path_ = std::filesystem::temp_directory_path() / ("kiln-test-" + std::to_string(random()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {
void setTensorType(onnx::ValueInfoProto* value, const std::string& name, std::vector<std::string> dims) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}
}  // namespace

onnx::ModelProto makeAddModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("add");
  auto* node = graph->add_node();
  node->set_op_type("Add");
  node->set_name("add");
  node->add_input("X");
  node->add_input("B");
  node->add_output("Y");
  setTensorType(graph->add_input(), "X", {"N", "4"});
  setTensorType(graph->add_output(), "Y", {"N", "4"});
  auto* b = graph->add_initializer();
  b->set_name("B");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(4);
  for (float v : {1.f, 2.f, 3.f, 4.f}) b->add_float_data(v);
  return model;
}

onnx::ModelProto makeExternalAddModel(const std::string& location) {
  onnx::ModelProto model = makeAddModel();
  auto* b = model.mutable_graph()->mutable_initializer(0);
  b->clear_float_data();
  b->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = b->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  entry = b->add_external_data();
  entry->set_key("offset");
  entry->set_value("0");
  entry = b->add_external_data();
  entry->set_key("length");
  entry->set_value("16");
  return model;
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace kiln::testing
