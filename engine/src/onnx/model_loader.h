// Loading ONNX models: file or memory buffer → onnx::ModelProto (external data resolved) → shape inference → ir::Model.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>

#include "ir/graph.h"
#include "kiln/compile_outputs.h"
#include "kiln/status.h"

namespace kiln::onnx_io {

struct LoadOptions {
  // session.model_external_initializers_file_folder_path: folder external data resolves against. Overrides the
  // model's folder for file loads; required for buffer loads of models with external data.
  std::string externalDataFolder;
  bool runShapeInference = true;
  // Main-graph initializers in external data of at least kDeferredExternalBytes stay in their file: the IR holds
  // their type and shape only (isDeferred) and LoadedModel::externalInitializers their range, read on demand with
  // loadDeferredInitializers. For the compile path, where most weights pass into the context binary untouched.
  bool deferLargeExternalData = false;
  // Calls of model-local functions are replaced by the functions' nodes (onnx/function_inliner.h); tools that
  // describe the model as written (kiln::inspectModel) keep the calls and ModelProto.functions.
  bool inlineLocalFunctions = true;
};

// The smallest external initializer LoadOptions::deferLargeExternalData leaves in its file (smaller ones, such as
// shapes and scales, are read at load: constant folding and shape evaluation need their values).
inline constexpr size_t kDeferredExternalBytes = size_t{1} << 20;

struct LoadedModel {
  onnx::ModelProto proto;  // external data inlined, shapes inferred
  ir::Model model;
  // Where the main graph's external initializers came from (the Compile API can keep them there).
  std::map<std::string, ExternalInitializerInfo> externalInitializers;
  // The initializers left in their file (deferLargeExternalData); their proto entries stay external too.
  std::set<std::string> deferred;
  double loadMs = 0;
  double shapeInferenceMs = 0;
};

// Parses a model file. NO_SUCHFILE when missing; INVALID_PROTOBUF when it does not parse.
Result<LoadedModel> loadModelFile(const std::string& path, const LoadOptions& options = {});
// Parses a serialized model held in memory.
Result<LoadedModel> loadModelBuffer(std::span<const std::byte> bytes, const LoadOptions& options = {});

// The main graph's initializers in external data of the model file at `path`, whose bytes are `bytes`, and where
// they lie (what LoadedModel::externalInitializers holds), from one protobuf parse: no model is built.
Result<std::map<std::string, ExternalInitializerInfo>> externalInitializerRanges(std::span<const std::byte> bytes,
                                                                                 const std::string& path);

// Reads every external-data tensor of the model (initializers and tensor attributes, subgraphs included) from
// files under `baseFolder` (path rules apply) and inlines it as raw_data.
Status inlineExternalData(onnx::ModelProto& model, const std::string& baseFolder);
// Runs ONNX shape inference in place (non-strict: failures are logged, never fatal).
void inferShapes(onnx::ModelProto& model);
// Builds the IR (topologically sorted) from a proto whose external data is inlined, except the main-graph
// initializers named in `deferred`, which become type-and-shape-only tensors (isDeferred).
Result<ir::Model> modelFromProto(const onnx::ModelProto& proto, const std::set<std::string>& deferred = {});

// True for a tensor whose bytes were not loaded (an initializer deferLargeExternalData left in its file).
inline bool isDeferred(const Tensor& tensor) {
  return tensor.dtype() != DataType::STRING && tensor.rawData() == nullptr && tensor.numel() > 0;
}
// Reads the bytes of `range` (as loadModelFile resolved it) into `out`, whose size must be the range's. FAIL when
// the file cannot be read.
Status readExternalRange(const ExternalInitializerInfo& range, std::span<std::byte> out);
// The deferred tensor `shapeOnly` with its bytes read from `range`: the one way a deferred initializer's bytes are
// read. INVALID_GRAPH when the range's size is not the tensor's.
Result<Tensor> readDeferredInitializer(const Tensor& shapeOnly, const ExternalInitializerInfo& range);
// Reads every deferred initializer of `graph` (main graph) that `needed` names and `ranges` locates, in place.
Status loadDeferredInitializers(ir::Graph& graph, const std::map<std::string, ExternalInitializerInfo>& ranges,
                                const std::function<bool(const std::string&)>& needed);

}  // namespace kiln::onnx_io
