// Loading ONNX models: file or memory buffer → onnx::ModelProto (external data resolved) → shape inference → ir::Model.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <span>
#include <string>

#include "ir/graph.h"
#include "kiln/compiler.h"
#include "kiln/status.h"

namespace kiln::onnx_io {

struct LoadOptions {
  // session.model_external_initializers_file_folder_path: folder external data resolves against. Overrides the
  // model's folder for file loads; required for buffer loads of models with external data.
  std::string externalDataFolder;
  bool runShapeInference = true;
  // Calls of model-local functions are replaced by the functions' nodes (onnx/function_inliner.h); tools that
  // describe the model as written (kiln::inspectModel) keep the calls and ModelProto.functions.
  bool inlineLocalFunctions = true;
};

struct LoadedModel {
  onnx::ModelProto proto;  // external data inlined, shapes inferred
  ir::Model model;
  // Where the main graph's external initializers came from (the Compile API can keep them there).
  std::map<std::string, ExternalInitializerInfo> externalInitializers;
  double loadMs = 0;
  double shapeInferenceMs = 0;
};

// Parses a model file. NO_SUCHFILE when missing; INVALID_PROTOBUF when it does not parse.
Result<LoadedModel> loadModelFile(const std::string& path, const LoadOptions& options = {});
// Parses a serialized model held in memory.
Result<LoadedModel> loadModelBuffer(std::span<const std::byte> bytes, const LoadOptions& options = {});

// Reads every external-data tensor of the model (initializers and tensor attributes, subgraphs included) from
// files under `baseFolder` (path rules apply) and inlines it as raw_data.
Status inlineExternalData(onnx::ModelProto& model, const std::string& baseFolder);
// Runs ONNX shape inference in place (non-strict: failures are logged, never fatal).
void inferShapes(onnx::ModelProto& model);
// Builds the IR (topologically sorted) from a proto whose external data is inlined.
Result<ir::Model> modelFromProto(const onnx::ModelProto& proto);

}  // namespace kiln::onnx_io
