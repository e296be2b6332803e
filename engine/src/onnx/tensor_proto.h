// Conversion between onnx::TensorProto and kiln::Tensor.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::onnx_io {

// Converts a TensorProto with inline data (raw_data or typed fields). External data must have been resolved
// by the caller (see resolveExternalData); a tensor still marked external is INVALID_GRAPH.
Result<Tensor> tensorFromProto(const onnx::TensorProto& proto);
// Fills `proto` (dims, data_type, raw_data or string_data); keeps its name.
void tensorToProto(const Tensor& tensor, onnx::TensorProto& proto);
// Maps an ONNX TypeProto element type value to DataType (UNDEFINED if unknown).
DataType dataTypeFromOnnx(int32_t elemType);

}  // namespace kiln::onnx_io
