// Type and shape inference for onnxruntime's contrib operators that Kiln runs (libonnx has no schema for them):
// without it every value after the first com.microsoft node of a transformer is untyped, and an EP that decides
// from types (the Vulkan EP's support checks) refuses the whole decoder. Each schema only infers; inputs and
// attributes are checked by the kernels.
#include "onnx/contrib_schemas.h"

#include <onnx/defs/shape_inference.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "ir/graph.h"

namespace kiln {
namespace {

using onnx::InferenceContext;

bool hasRank(InferenceContext& ctx, size_t input, int rank) {
  if (ctx.getNumInputs() <= input || ctx.getInputType(input) == nullptr) return false;
  const auto& type = ctx.getInputType(input)->tensor_type();
  return type.has_shape() && type.shape().dim_size() == rank;
}

const onnx::TensorShapeProto& inputShape(InferenceContext& ctx, size_t input) {
  return ctx.getInputType(input)->tensor_type().shape();
}

// Output `output` takes input `input`'s element type and shape.
void sameAs(InferenceContext& ctx, size_t input, size_t output) {
  if (ctx.getNumOutputs() <= output || ctx.getNumInputs() <= input || ctx.getInputType(input) == nullptr) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, input, output);
  if (onnx::hasInputShape(ctx, input)) onnx::propagateShapeFromInputToOutput(ctx, input, output);
}

// Output `output`: float, input 0's shape with the last `normalized` dims set to 1 (normalization statistics).
void statistics(InferenceContext& ctx, size_t output, int64_t axis) {
  if (ctx.getNumOutputs() <= output) return;
  onnx::updateOutputElemType(ctx, output, onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = inputShape(ctx, 0);
  const int rank = in.dim_size();
  const int64_t first = axis < 0 ? axis + rank : axis;
  auto* out = onnx::getOutputShape(ctx, output);
  out->Clear();
  for (int d = 0; d < rank; ++d) {
    if (d < first) {
      *out->add_dim() = in.dim(d);
    } else {
      out->add_dim()->set_dim_value(1);
    }
  }
}

// Output `output`: input 0's element type, shape [in0 dims 0..1, last].
void batchSeq(InferenceContext& ctx, size_t output, const onnx::TensorShapeProto_Dimension& last) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, output);
  if (!hasRank(ctx, 0, 3)) return;
  auto* out = onnx::getOutputShape(ctx, output);
  out->Clear();
  *out->add_dim() = inputShape(ctx, 0).dim(0);
  *out->add_dim() = inputShape(ctx, 0).dim(1);
  *out->add_dim() = last;
}

onnx::TensorShapeProto_Dimension knownDim(int64_t value) {
  onnx::TensorShapeProto_Dimension d;
  if (value > 0) d.set_dim_value(value);
  return d;
}

void inferGroupQueryAttention(InferenceContext& ctx) {
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  const int64_t kvHeads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  const bool packed = ctx.getNumInputs() < 2 || ctx.getInputType(1) == nullptr;
  int64_t head = -1;
  if (hasRank(ctx, 0, 3) && inputShape(ctx, 0).dim(2).has_dim_value() && heads > 0) {
    const int64_t hidden = inputShape(ctx, 0).dim(2).dim_value();
    head = hidden / (packed ? heads + 2 * kvHeads : heads);
  }
  batchSeq(ctx, 0, knownDim(head > 0 ? head * heads : -1));
  for (size_t out = 1; out < 3 && out < ctx.getNumOutputs(); ++out) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
    if (!hasRank(ctx, 0, 3)) continue;
    auto* shape = onnx::getOutputShape(ctx, out);
    shape->Clear();
    *shape->add_dim() = inputShape(ctx, 0).dim(0);
    *shape->add_dim() = knownDim(kvHeads);
    shape->add_dim();  // present length: max(total_sequence_length, past length), a run-time value
    *shape->add_dim() = knownDim(head);
  }
}

void inferMultiHeadAttention(InferenceContext& ctx) {
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  onnx::TensorShapeProto_Dimension vHidden;
  if (hasRank(ctx, 2, 3)) {
    vHidden = inputShape(ctx, 2).dim(2);
  } else if (hasRank(ctx, 2, 4) && inputShape(ctx, 2).dim(3).has_dim_value() && heads > 0) {
    vHidden = knownDim(heads * inputShape(ctx, 2).dim(3).dim_value());
  }
  batchSeq(ctx, 0, vHidden);
  for (size_t out = 1; out < 3 && out < ctx.getNumOutputs(); ++out) onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
}

void inferMatMulNBits(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& a = inputShape(ctx, 0);
  if (a.dim_size() == 0) return;
  auto* out = onnx::getOutputShape(ctx, 0);
  out->Clear();
  for (int d = 0; d + 1 < a.dim_size(); ++d) *out->add_dim() = a.dim(d);
  *out->add_dim() = knownDim(onnx::getAttribute(ctx, "N", 0));
}

struct SchemaSpec {
  const char* domain;
  const char* op;
  std::function<void(InferenceContext&)> infer;
};

std::vector<SchemaSpec> schemaSpecs() {
  auto unary = [](InferenceContext& ctx) { sameAs(ctx, 0, 0); };
  auto skipNorm = [](InferenceContext& ctx) {
    sameAs(ctx, 0, 0);
    statistics(ctx, 1, -1);
    statistics(ctx, 2, -1);
    sameAs(ctx, 0, 3);
  };
  const char* ms = ir::kMicrosoftDomain;
  return {
      {ms, "FastGelu", unary},
      {ms, "BiasGelu", unary},
      {ms, "Gelu", unary},
      {ms, "QuickGelu", unary},
      {ms, "RotaryEmbedding", unary},
      {ms, "SkipLayerNormalization", skipNorm},
      {ms, "SkipSimplifiedLayerNormalization", skipNorm},
      {"", "SimplifiedLayerNormalization",
       [](InferenceContext& ctx) {
         sameAs(ctx, 0, 0);
         statistics(ctx, 1, onnx::getAttribute(ctx, "axis", -1));
       }},
      {ms, "GroupQueryAttention", inferGroupQueryAttention},
      {ms, "MultiHeadAttention", inferMultiHeadAttention},
      {ms, "MatMulNBits", inferMatMulNBits},
  };
}

}  // namespace

const onnx::OpSchema* contribSchema(const std::string& opType, const std::string& domain) {
  static const std::map<std::pair<std::string, std::string>, std::unique_ptr<onnx::OpSchema>> schemas = [] {
    std::map<std::pair<std::string, std::string>, std::unique_ptr<onnx::OpSchema>> built;
    for (const SchemaSpec& spec : schemaSpecs()) {
      auto schema = std::make_unique<onnx::OpSchema>(spec.op, __FILE__, __LINE__);
      schema->SetDomain(spec.domain).SinceVersion(1).TypeAndShapeInferenceFunction(spec.infer);
      built[{spec.domain, spec.op}] = std::move(schema);
    }
    return built;
  }();
  const auto it = schemas.find({domain == "ai.onnx" ? "" : domain, opType});
  return it == schemas.end() ? nullptr : it->second.get();
}

}  // namespace kiln
