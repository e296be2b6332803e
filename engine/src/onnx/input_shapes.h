// The shapes a session's inputs accept (and kiln::inspectModel's, given input shapes): the model's declared shapes,
// fixed by the user's per-input shapes (SessionOptions::setInputShape) and by kiln.free_dim_override.<dim_param>
// entries (ONNX Runtime's keys). In onnx/ because it needs only the IR: sessions and model descriptions share it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/value_metadata.h"

namespace kiln {

// The shapes a user asked for, as the session layer hands them down from its parsed configuration.
struct InputShapeRequest {
  std::map<std::string, std::vector<int64_t>> shapes;   // input name -> its full shape (SessionOptions::setInputShape)
  std::map<std::string, std::string> freeDimOverrides;  // dim_param -> its kiln.free_dim_override.<dim_param> text
};

// The size a kiln.free_dim_override.<param> text gives: INVALID_ARGUMENT unless it is a non-negative integer.
Result<int64_t> parseFreeDimOverride(const std::string& param, const std::string& text);

// The graph's inputs that are not initializers, in declaration order, with the requested shapes applied.
// INVALID_ARGUMENT when a given shape names no such input, differs in rank or in a fixed dimension, or when one
// symbolic dimension gets two different sizes (from two inputs, or from an input and a free-dimension override).
Result<std::vector<ValueMetadata>> resolveInputShapes(const ir::Graph& graph, const InputShapeRequest& request);

}  // namespace kiln
