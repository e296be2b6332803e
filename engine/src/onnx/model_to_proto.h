// ir::Model → onnx::ModelProto: how EPContext models (and plain optimized models) are written.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::onnx_io {

// Fills `proto` for the initializer `name` of value `value`: embedded raw data by default, or an external-data
// reference. Called once per initializer, graphs in depth-first order.
using InitializerWriter =
    std::function<Status(const std::string& name, const Tensor& value, onnx::TensorProto& proto)>;

// Serializes `model` (subgraphs included). Initializers go through `writeInitializer` (empty: all embedded).
Result<onnx::ModelProto> modelToProto(const ir::Model& model, const InitializerWriter& writeInitializer = {});

}  // namespace kiln::onnx_io
