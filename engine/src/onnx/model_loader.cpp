#include "onnx/model_loader.h"

#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>

#include "epcontext/epcontext_names.h"
#include "onnx/path_rules.h"
#include "onnx/tensor_proto.h"
#include "util/file_io.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::onnx_io {
namespace {

struct ExternalInfo {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

Result<ExternalInfo> parseExternalInfo(const onnx::TensorProto& tensor) {
  ExternalInfo info;
  for (const auto& entry : tensor.external_data()) {
    try {
      if (entry.key() == "location") info.location = entry.value();
      else if (entry.key() == "offset") info.offset = std::stoll(entry.value());
      else if (entry.key() == "length") info.length = std::stoll(entry.value());
    } catch (const std::exception&) {
      return Status(StatusCode::INVALID_GRAPH, "tensor '" + tensor.name() + "' has a malformed external_data " +
                                                   entry.key() + " '" + entry.value() + "'");
    }
  }
  if (info.offset < 0) return Status(StatusCode::INVALID_GRAPH, "tensor '" + tensor.name() + "' has a negative offset");
  return info;
}

Status inlineTensor(onnx::TensorProto& tensor, const std::filesystem::path& base) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::ok();
  KILN_ASSIGN_OR_RETURN(const ExternalInfo info, parseExternalInfo(tensor));
  KILN_ASSIGN_OR_RETURN(const auto path, resolveContainedPath(base, info.location, "external data location"));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(StatusCode::NO_SUCHFILE, "external data file '" + path.string() + "' of tensor '" + tensor.name() +
                                               "' does not exist");
  }
  const auto fileSize = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  const int64_t length = info.length >= 0 ? info.length : fileSize - info.offset;
  if (info.offset > fileSize || length < 0 || info.offset + length > fileSize) {
    return Status(StatusCode::INVALID_GRAPH, "external data of tensor '" + tensor.name() + "' (offset " +
                                                 std::to_string(info.offset) + ", length " + std::to_string(length) +
                                                 ") lies outside '" + path.string() + "' (" +
                                                 std::to_string(fileSize) + " bytes)");
  }
  std::string data(static_cast<size_t>(length), '\0');
  std::ifstream in(path, std::ios::binary);
  in.seekg(info.offset);
  if (length > 0 && !in.read(data.data(), length)) {
    return Status(StatusCode::FAIL, "cannot read external data from '" + path.string() + "'");
  }
  tensor.set_raw_data(std::move(data));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return Status::ok();
}

Status inlineGraph(onnx::GraphProto& graph, const std::filesystem::path& base) {
  for (auto& init : *graph.mutable_initializer()) KILN_RETURN_IF_ERROR(inlineTensor(init, base));
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) KILN_RETURN_IF_ERROR(inlineTensor(*attr.mutable_t(), base));
      for (auto& t : *attr.mutable_tensors()) KILN_RETURN_IF_ERROR(inlineTensor(t, base));
      if (attr.has_g()) KILN_RETURN_IF_ERROR(inlineGraph(*attr.mutable_g(), base));
      for (auto& g : *attr.mutable_graphs()) KILN_RETURN_IF_ERROR(inlineGraph(g, base));
    }
  }
  return Status::ok();
}

bool graphHasExternalData(const onnx::GraphProto& graph) {
  for (const auto& init : graph.initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) return true;
  }
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL) return true;
      if (attr.has_g() && graphHasExternalData(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (graphHasExternalData(g)) return true;
      }
    }
  }
  return false;
}

Status recordExternalInitializers(LoadedModel& loaded, const std::filesystem::path& base) {
  for (const auto& init : loaded.proto.graph().initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    KILN_ASSIGN_OR_RETURN(const ExternalInfo info, parseExternalInfo(init));
    KILN_ASSIGN_OR_RETURN(const auto path, resolveContainedPath(base, info.location, "external data location"));
    std::error_code ec;
    const int64_t size = info.length >= 0 ? info.length
                                          : static_cast<int64_t>(std::filesystem::file_size(path, ec)) - info.offset;
    loaded.externalInitializers[init.name()] = {path.string(), info.offset, size};
  }
  return Status::ok();
}

// An EPContext model carries the value types its compile inferred; ONNX shape inference cannot see through
// EPContext nodes anyway, so it is skipped for them (a measurable share of a cached load).
bool hasEpContextNode(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == epctx::kOpType && node.domain() == epctx::kDomain) return true;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && hasEpContextNode(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (hasEpContextNode(g)) return true;
      }
    }
  }
  return false;
}

Result<LoadedModel> finishLoad(LoadedModel loaded, const std::string& baseFolder, const LoadOptions& options,
                               const Stopwatch& clock) {
  // Checked before shape inference, which would add an empty graph.
  if (!loaded.proto.has_graph()) return Status(StatusCode::INVALID_GRAPH, "the model has no graph");
  if (graphHasExternalData(loaded.proto.graph())) {
    if (baseFolder.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "the model has external data: set session.model_external_initializers_file_folder_path");
    }
    KILN_RETURN_IF_ERROR(recordExternalInitializers(loaded, baseFolder));
    KILN_RETURN_IF_ERROR(inlineGraph(*loaded.proto.mutable_graph(), baseFolder));
  }
  loaded.loadMs = clock.elapsedMs();
  if (options.runShapeInference && !hasEpContextNode(loaded.proto.graph())) {
    Stopwatch shapeClock;
    inferShapes(loaded.proto);
    loaded.shapeInferenceMs = shapeClock.elapsedMs();
  }
  KILN_ASSIGN_OR_RETURN(loaded.model, modelFromProto(loaded.proto));
  return loaded;
}

}  // namespace

Status inlineExternalData(onnx::ModelProto& model, const std::string& baseFolder) {
  return inlineGraph(*model.mutable_graph(), baseFolder);
}

void inferShapes(onnx::ModelProto& model) {
  try {
    onnx::ShapeInferenceOptions options;
    options.check_type = false;
    options.error_mode = 0;
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    log::debug("shape inference stopped early: {}", e.what());
  }
}

Result<LoadedModel> loadModelFile(const std::string& path, const LoadOptions& options) {
  Stopwatch clock;
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path));
  LoadedModel loaded;
  if (bytes.empty()) return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is empty");
  if (!loaded.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
  }
  std::string base = options.externalDataFolder;
  if (base.empty()) {
    const auto parent = std::filesystem::path(path).parent_path();
    base = parent.empty() ? "." : parent.string();
  }
  auto result = finishLoad(std::move(loaded), base, options, clock);
  if (!result.isOk()) return result.status().withContext("loading '" + path + "'");
  return result;
}

Result<LoadedModel> loadModelBuffer(std::span<const std::byte> bytes, const LoadOptions& options) {
  Stopwatch clock;
  LoadedModel loaded;
  if (bytes.empty() || !loaded.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "the buffer is not a valid ONNX model (protobuf parse failed)");
  }
  return finishLoad(std::move(loaded), options.externalDataFolder, options, clock);
}

}  // namespace kiln::onnx_io
