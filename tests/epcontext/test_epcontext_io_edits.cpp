// Ctx models edited after compiling, against what their binaries were compiled for (epcontext/io_signature.h).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "epcontext_error_fixture.h"
#include "kiln/compatibility.h"

namespace kiln::testing {
namespace {

// A ctx model is an editable file: a graph input or output retyped (float32 to int64), given another rank or another
// fixed size no longer matches what its binary was compiled for, whose kernels would read the bytes as float32 and
// print garbage (issue 31: exit 0, an int64 output of -4.8e18). Loading refuses it naming the value, and kiln check
// says UNSUPPORTED with the same reason, although the binary itself is untouched.
TEST_F(EpContextErrors, AnEditedInputOrOutputTypeRankOrSizeIsRefused) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  using TensorEdit = std::function<void(onnx::TypeProto_Tensor&)>;
  const auto editValue = [](std::string name, TensorEdit change) {
    return [name, change](onnx::ModelProto& model) {
      auto* graph = model.mutable_graph();
      for (auto* values : {graph->mutable_input(), graph->mutable_output()}) {
        for (auto& value : *values) {
          if (value.name() == name) change(*value.mutable_type()->mutable_tensor_type());
        }
      }
    };
  };
  const std::vector<std::tuple<std::string, std::string, std::string, TensorEdit>> edits{
      {"int64_ctx.onnx", "input", "x", [](auto& t) { t.set_elem_type(onnx::TensorProto::INT64); }},
      {"rank_ctx.onnx", "input", "x", [](auto& t) { t.mutable_shape()->add_dim()->set_dim_value(1); }},
      {"size_ctx.onnx", "input", "x",
       [](auto& t) { t.mutable_shape()->mutable_dim(0)->set_dim_value(t.shape().dim(0).dim_value() + 1); }},
      {"output_ctx.onnx", "output", "y", [](auto& t) { t.set_elem_type(onnx::TensorProto::INT64); }},
  };
  for (const auto& [file, role, name, change] : edits) {
    SCOPED_TRACE(file);
    const std::string value = role + " '" + name + "'";
    editCtx(at("m_ctx.onnx"), at(file), editValue(name, change));
    EXPECT_STATUS(createStatus(at(file)), StatusCode::INVALID_GRAPH, value);
    EXPECT_STATUS(createStatus(at(file)), StatusCode::INVALID_GRAPH, "compiled for float32");
    auto judged = getModelCompatibility(at(file));
    ASSERT_TRUE(judged.isOk()) << judged.status().toString();
    EXPECT_EQ(judged->state, CompiledModelCompatibility::UNSUPPORTED);
    std::string reasons;
    for (const auto& reason : judged->reasons) reasons += reason + "; ";
    EXPECT_NE(reasons.find(value), std::string::npos) << reasons;
  }
  EXPECT_TRUE(createStatus(at("m_ctx.onnx")).isOk()) << "control: the unedited ctx model loads";
  auto control = getModelCompatibility(at("m_ctx.onnx"));
  ASSERT_TRUE(control.isOk()) << control.status().toString();
  EXPECT_NE(control->state, CompiledModelCompatibility::UNSUPPORTED);
  EXPECT_TRUE(control->fromMetadata) << "an unedited ctx model is still answered from its metadata alone";
}

}  // namespace
}  // namespace kiln::testing
