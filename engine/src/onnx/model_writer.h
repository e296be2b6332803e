// Saving ONNX models: to a file (atomically), to a memory buffer, or through a caller's write callback.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::onnx_io {

// Serializes `model` to `path` atomically (temp file + rename): a failure leaves any existing file untouched.
Status saveModelFile(const onnx::ModelProto& model, const std::string& path);
// Serializes `model` into a byte buffer.
Result<std::vector<std::byte>> saveModelBuffer(const onnx::ModelProto& model);
// Serializes `model` and hands the bytes to `write` in one or more chunks; the first non-OK status stops it.
Status saveModelStream(const onnx::ModelProto& model,
                       const std::function<Status(std::span<const std::byte>)>& write);

}  // namespace kiln::onnx_io
