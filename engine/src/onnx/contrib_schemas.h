// Inference-only ONNX schemas for the onnxruntime contrib operators Kiln's kernels run (com.microsoft, and
// SimplifiedLayerNormalization, which onnxruntime registers in ai.onnx), used by shape inference where libonnx
// knows no schema.
#pragma once

#include <onnx/defs/schema.h>

#include <string>

namespace kiln {

// The schema of `opType` in `domain` ("" or "ai.onnx" for the default domain), or nullptr when Kiln has none.
const onnx::OpSchema* contribSchema(const std::string& opType, const std::string& domain);

}  // namespace kiln
