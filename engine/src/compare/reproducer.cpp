// writeReproducer (kiln/compare.h): one node as a model of its own, with the inputs the reference side feeds it.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "compare/exposed_model.h"
#include "kiln/compare.h"
#include "kiln/tensor_io.h"
#include "onnx/model_writer.h"
#include "util/file_io.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

Status checkEmptyFolder(const std::string& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) {
    fs::create_directories(dir, error);
    if (error) return Status(StatusCode::INVALID_ARGUMENT, "cannot create the reproducer folder '" + dir + "'");
    return Status::ok();
  }
  if (!fs::is_directory(dir, error)) {
    return Status(StatusCode::INVALID_ARGUMENT, "the reproducer folder '" + dir + "' is not a folder");
  }
  if (!fs::is_empty(dir, error)) {
    return Status(StatusCode::INVALID_ARGUMENT,
                  "the reproducer folder '" + dir + "' is not empty: give a new or empty folder");
  }
  return Status::ok();
}

const onnx::NodeProto* findNode(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    if (compare::nodeName(node) == name) return &node;
  }
  return nullptr;
}

void setType(onnx::ValueInfoProto& info, const Tensor& tensor) {
  auto* type = info.mutable_type()->mutable_tensor_type();
  type->set_elem_type(static_cast<int32_t>(tensor.dtype()));
  auto* shape = type->mutable_shape();
  for (int64_t d : tensor.shape()) shape->add_dim()->set_dim_value(d);
}

Status writeText(const std::string& path, const std::string& text) {
  return writeFileAtomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

}  // namespace

Result<Reproducer> writeReproducer(const CompareSide& reference, const std::string& nodeName,
                                   const std::vector<NamedTensor>& inputs, const std::string& dir,
                                   const std::string& note) {
  KILN_RETURN_IF_ERROR(checkEmptyFolder(dir));
  KILN_ASSIGN_OR_RETURN(compare::SourceModel source, compare::loadSourceModel(reference.modelPath, inputs));
  const onnx::NodeProto* found = findNode(source.proto.graph(), nodeName);
  if (!found) {
    for (const auto& owner : source.proto.graph().node()) {
      for (const auto& attribute : owner.attribute()) {
        if (attribute.has_g() && findNode(attribute.g(), nodeName)) {
          return Status(StatusCode::NOT_IMPLEMENTED, "node '" + nodeName + "' is inside the " + attribute.name() +
                                                         " of '" + compare::nodeName(owner) +
                                                         "': reproducers are written for top-level nodes only");
        }
      }
    }
    return Status(StatusCode::INVALID_ARGUMENT, "the model has no node named '" + nodeName + "'");
  }
  const onnx::NodeProto node = *found;
  // Weights (initializers and Constant nodes' tensors) become the one-node model's initializers.
  std::map<std::string, const onnx::TensorProto*> weights;
  for (const auto& name : node.input()) {
    if (const onnx::TensorProto* w = name.empty() ? nullptr : compare::findWeight(source.proto.graph(), name)) {
      weights.emplace(name, w);
    }
  }
  std::set<std::string> graphInputs;
  for (const auto& in : inputs) graphInputs.insert(in.name);
  // Computed inputs (and the node's outputs) come from one reference run with them exposed.
  std::vector<std::string> runtimeInputs, exposed;
  for (const auto& name : node.input()) {
    if (name.empty() || weights.count(name) ||
        std::find(runtimeInputs.begin(), runtimeInputs.end(), name) != runtimeInputs.end()) {
      continue;
    }
    runtimeInputs.push_back(name);
    if (!graphInputs.count(name)) exposed.push_back(name);
  }
  for (const auto& name : node.output()) {
    if (!name.empty()) exposed.push_back(name);
  }
  compare::TempFolder temp;
  KILN_RETURN_IF_ERROR(temp.create());
  const std::string exposedPath = temp.path() + "/exposed.onnx";
  KILN_RETURN_IF_ERROR(onnx_io::saveModelFile(compare::withOutputs(source, exposed).proto, exposedPath));
  CompareSide side = reference;
  side.modelPath = exposedPath;
  KILN_ASSIGN_OR_RETURN(std::vector<NamedTensor> values, runSide(side, inputs));
  for (const auto& in : inputs) values.push_back(in);
  auto valueOf = [&values](const std::string& name) {
    for (const auto& v : values) {
      if (v.name == name) return v.tensor;
    }
    return Tensor();
  };

  onnx::ModelProto model;
  model.set_ir_version(source.proto.ir_version());
  *model.mutable_opset_import() = source.proto.opset_import();
  model.set_producer_name("kiln compare --reproducer");
  auto* graph = model.mutable_graph();
  graph->set_name("reproducer");
  *graph->add_node() = node;
  for (const auto& [name, w] : weights) {
    auto* init = graph->add_initializer();
    *init = *w;
    init->set_name(name);
  }
  Reproducer written;
  written.modelPath = (fs::path(dir) / "model.onnx").string();
  std::string runLine = "kiln run model.onnx";
  for (size_t k = 0; k < runtimeInputs.size(); ++k) {
    const Tensor tensor = valueOf(runtimeInputs[k]);
    if (!tensor.defined()) return Status(StatusCode::FAIL, "no value for the node input '" + runtimeInputs[k] + "'");
    auto* info = graph->add_input();
    info->set_name(runtimeInputs[k]);
    setType(*info, tensor);
    const std::string file = "input_" + std::to_string(k) + ".npy";
    KILN_RETURN_IF_ERROR(writeNpyFile((fs::path(dir) / file).string(), tensor));
    written.inputNames.push_back(runtimeInputs[k]);
    written.inputFiles.push_back((fs::path(dir) / file).string());
    runLine += " --input '" + runtimeInputs[k] + "=" + file + "'";
  }
  int k = 0;
  for (const auto& name : node.output()) {
    if (name.empty()) continue;
    const Tensor tensor = valueOf(name);
    auto* info = graph->add_output();
    info->set_name(name);
    if (tensor.defined()) setType(*info, tensor);
    const std::string file = "expected_" + std::to_string(k++) + ".npy";
    if (tensor.defined()) KILN_RETURN_IF_ERROR(writeNpyFile((fs::path(dir) / file).string(), tensor));
    written.outputNames.push_back(name);
    written.expectedOutputFiles.push_back((fs::path(dir) / file).string());
  }
  KILN_RETURN_IF_ERROR(onnx_io::saveModelFile(model, written.modelPath));
  written.readmePath = (fs::path(dir) / "README.txt").string();
  std::string readme = "Node '" + nodeName + "' (" + node.op_type() + ") of " + reference.modelPath +
                       " as a one-node model; its inputs as " + reference.label + " computes them (input_K.npy) and " +
                       reference.label + "'s outputs of it (expected_K.npy, in output order).\nRun it: " + runLine +
                       " --output-dir out\n";
  if (!note.empty()) readme += note + "\n";
  KILN_RETURN_IF_ERROR(writeText(written.readmePath, readme));
  return written;
}

}  // namespace kiln
