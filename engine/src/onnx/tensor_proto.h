// Conversion between onnx::TensorProto and kiln::Tensor.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::onnx_io {

// TensorProto.DataType numbers of the 4-bit integers (IR version 10), which DataType does not name.
constexpr int32_t kOnnxUint4 = 21;
constexpr int32_t kOnnxInt4 = 22;

// Converts a TensorProto with inline data (raw_data or typed fields). External data must have been resolved
// by the caller (see resolveExternalData); a tensor still marked external is INVALID_GRAPH. int4/uint4 tensors
// come back widened to int8/uint8 (one value a byte, int4 sign-extended).
Result<Tensor> tensorFromProto(const onnx::TensorProto& proto);
// Fills `proto` (dims, data_type, raw_data or string_data); keeps its name.
void tensorToProto(const Tensor& tensor, onnx::TensorProto& proto);
// Maps an ONNX TypeProto element type value to DataType (UNDEFINED if unknown).
DataType dataTypeFromOnnx(int32_t elemType);

}  // namespace kiln::onnx_io
