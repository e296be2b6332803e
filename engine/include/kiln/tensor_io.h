// Reading and writing tensors as files: ONNX TensorProto (.pb) and NumPy (.npy); sequence/optional values (.pb).
#pragma once

#include "kiln/export.h"

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln {

// Parses a serialized onnx.TensorProto file (raw_data or typed fields). Its name, if any, goes to `name`.
KILN_EXPORT Result<Tensor> readTensorProtoFile(const std::string& path, std::string* name = nullptr);
// Parses a serialized onnx.TensorProto, SequenceProto or OptionalProto file, as `kind` (TENSOR, SEQUENCE,
// OPTIONAL) says; sequences and optionals of tensors only. Its name, if any, goes to `name`.
KILN_EXPORT Result<Value> readValueProtoFile(const std::string& path, ValueKind kind, std::string* name = nullptr);
// Reads a .npy file (little-endian, C order; bool, ints, float16/32/64).
KILN_EXPORT Result<Tensor> readNpyFile(const std::string& path);
// Reads either, by extension (.pb or .npy).
KILN_EXPORT Result<Tensor> readTensorFile(const std::string& path);
// Writes a .npy file atomically.
KILN_EXPORT Status writeNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace kiln
