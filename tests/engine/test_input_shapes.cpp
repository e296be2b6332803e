// SessionOptions::setInputShape: the shapes given per input are checked while the session loads the model and
// then fix the shapes the session accepts; kiln.free_dim_override.<dim_param> entries keep working beside them.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/compiler.h"
#include "kiln/model_info.h"
#include "kiln/session.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::TempDir;

// Y = X + B with X and B both float[N,4]: two inputs sharing the symbolic dimension N.
std::string twoInputModel(const TempDir& dir) {
  onnx::ModelProto model = testing::makeAddModel();
  auto* graph = model.mutable_graph();
  graph->clear_initializer();
  *graph->add_input() = graph->input(0);
  graph->mutable_input(1)->set_name("B");
  std::string bytes;
  model.SerializeToString(&bytes);
  testing::writeBytes(dir.file("two_inputs.onnx"), bytes);
  return dir.file("two_inputs.onnx");
}

Status createWith(const std::string& model, const SessionOptions& options) {
  return Session::create(model, options).status();
}

bool mentions(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST(InputShapes, FixTheGivenInputAndInputsSharingItsDimensions) {
  TempDir dir;
  SessionOptions options;
  options.setInputShape("X", {3, 4});
  auto session = Session::create(twoInputModel(dir), options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  const auto& inputs = (*session)->inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].shape[0].value, 3);
  EXPECT_EQ(inputs[1].shape[0].value, 3);  // B shares N with X
  EXPECT_TRUE((*session)->run({{"X", Tensor(DataType::FLOAT, {3, 4})}, {"B", Tensor(DataType::FLOAT, {3, 4})}}).isOk());
  auto wrong = (*session)->run({{"X", Tensor(DataType::FLOAT, {2, 4})}, {"B", Tensor(DataType::FLOAT, {2, 4})}});
  ASSERT_EQ(wrong.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(wrong.status(), "expects shape 3x4, got 2x4")) << wrong.status().message();
}

TEST(InputShapes, UnknownInputIsInvalidArgument) {
  TempDir dir;
  SessionOptions options;
  options.setInputShape("pixels", {1, 4});
  const Status status = createWith(twoInputModel(dir), options);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "'pixels', which is not a model input")) << status.message();
  EXPECT_FALSE(mentions(status, "--shape")) << "engine messages name no CLI flag";
}

TEST(InputShapes, RankMismatchIsInvalidArgument) {
  TempDir dir;
  SessionOptions options;
  options.setInputShape("X", {3});
  const Status status = createWith(twoInputModel(dir), options);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "has rank 1, the input has rank 2")) << status.message();
}

TEST(InputShapes, FixedDimensionMismatchIsInvalidArgument) {
  TempDir dir;
  SessionOptions options;
  options.setInputShape("X", {3, 5});
  const Status status = createWith(twoInputModel(dir), options);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "fixed dimension 1 (4)")) << status.message();
}

TEST(InputShapes, InputsSharingADimensionMustAgree) {
  TempDir dir;
  const std::string model = twoInputModel(dir);
  SessionOptions agree;
  agree.setInputShape("X", {2, 4});
  agree.setInputShape("B", {2, 4});
  EXPECT_TRUE(createWith(model, agree).isOk());

  SessionOptions disagree;
  disagree.setInputShape("X", {2, 4});
  disagree.setInputShape("B", {3, 4});
  const Status status = createWith(model, disagree);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "symbolic dimension 'N'")) << status.message();
  EXPECT_TRUE(mentions(status, "input 'X'") && mentions(status, "input 'B'")) << status.message();
}

TEST(InputShapes, AFreeDimensionOverrideMustAgreeWithAGivenShape) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.free_dim_override.N", "5").isOk());
  options.setInputShape("X", {2, 4});
  const Status status = createWith(twoInputModel(dir), options);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "kiln.free_dim_override.N")) << status.message();
}

TEST(InputShapes, FreeDimensionOverrideAloneFixesEveryInputUsingIt) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.free_dim_override.N", "6").isOk());
  auto session = Session::create(twoInputModel(dir), options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ((*session)->inputs()[0].shape[0].value, 6);
  EXPECT_EQ((*session)->inputs()[1].shape[0].value, 6);
}

TEST(InputShapes, OverflowingFreeDimensionOverrideIsInvalidArgument) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.free_dim_override.N", "99999999999999999999").isOk());
  const Status status = createWith(twoInputModel(dir), options);
  ASSERT_EQ(status.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(status, "99999999999999999999")) << status.message();
}

// compileModel loads the model as a session does: a bad shape is refused before anything is compiled or written.
TEST(InputShapes, CompileRefusesABadShapeBeforeWriting) {
  TempDir dir;
  SessionOptions session;
  session.setInputShape("X", {2, 4, 1});
  ModelCompilationOptions options(std::move(session));
  options.setInputModelPath(twoInputModel(dir));
  options.setOutputModelPath(dir.file("two_inputs_ctx.onnx"));
  const auto result = compileModel(options);
  ASSERT_EQ(result.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(result.status(), "has rank 3")) << result.status().message();
  EXPECT_FALSE(std::filesystem::exists(dir.file("two_inputs_ctx.onnx")));
}

// kiln::inspectModel with input shapes (the studio's "Input shapes"): shape inference with the given inputs fixed
// gives concrete dimensions downstream, and the shapes are checked with the session's own messages.
TEST(InputShapes, InspectModelInfersConcreteShapesFromGivenInputs) {
  TempDir dir;
  const std::string model = twoInputModel(dir);
  auto declared = inspectModel(model);
  ASSERT_TRUE(declared.isOk()) << declared.status().toString();
  EXPECT_FALSE(declared->values.at("Y").shape[0].isFixed());
  auto fixed = inspectModel(model, {{"X", {3, 4}}});
  ASSERT_TRUE(fixed.isOk()) << fixed.status().toString();
  EXPECT_EQ(fixed->values.at("B").shape[0].value, 3);  // B shares N with X
  ASSERT_TRUE(fixed->values.at("Y").hasShape);
  EXPECT_EQ(fixed->values.at("Y").shape[0].value, 3);
  EXPECT_EQ(fixed->values.at("Y").shape[1].value, 4);
}

TEST(InputShapes, InspectModelRefusesShapesAsASessionDoes) {
  TempDir dir;
  const std::string model = twoInputModel(dir);
  const auto unknown = inspectModel(model, {{"pixels", {1, 4}}});
  ASSERT_EQ(unknown.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(unknown.status(), "'pixels', which is not a model input")) << unknown.status().message();
  const auto rank = inspectModel(model, {{"X", {2, 4, 1}}});
  ASSERT_EQ(rank.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(mentions(rank.status(), "has rank 3")) << rank.status().message();
}

}  // namespace
}  // namespace kiln
