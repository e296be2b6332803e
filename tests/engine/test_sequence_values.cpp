// Sequence and optional values: the sequence ops no ONNX node case exercises (SplitToSequence, ConcatFromSequence,
// SequenceErase, SequenceAt, SequenceLength, SequenceConstruct), Optional, and Session::runValues/run on them.
#include <gtest/gtest.h>

#include "kiln/session.h"
#include "model_builder.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

using testing::attrInt;
using testing::ModelBuilder;

// A graph output (or input) of sequence<float> or optional<float tensor> type.
void addTyped(onnx::ValueInfoProto* value, const std::string& name, ValueKind kind) {
  value->set_name(name);
  onnx::TypeProto* type = value->mutable_type();
  if (kind == ValueKind::SEQUENCE) type = type->mutable_sequence_type()->mutable_elem_type();
  if (kind == ValueKind::OPTIONAL) type = type->mutable_optional_type()->mutable_elem_type();
  type->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

onnx::TensorProto int64Scalar(const std::string& name, int64_t value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(value);
  return t;
}

std::unique_ptr<Session> createSession(const ModelBuilder& builder, const SessionOptions& options = {}) {
  std::string bytes;
  builder.build().SerializeToString(&bytes);
  auto session = Session::create(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

TEST(SequenceValues, SplitEraseAtConcatAndLength) {
  ModelBuilder b(17);
  b.input("X", {2, 5});
  auto& split = b.node("SplitToSequence", {"X", "two"}, {"chunks"});  // chunks of 2 along axis 1: 2, 2, 1
  attrInt(split, "axis", 1);
  *b.proto().add_initializer() = int64Scalar("two", 2);
  *b.proto().add_initializer() = int64Scalar("zero", 0);
  *b.proto().add_initializer() = int64Scalar("minus_one", -1);
  b.node("SequenceErase", {"chunks", "zero"}, {"rest"});
  b.node("SequenceAt", {"rest", "minus_one"}, {"last"});
  b.node("SequenceLength", {"chunks"}, {"count"});
  attrInt(b.node("ConcatFromSequence", {"rest"}, {"joined"}), "axis", 1);
  auto& ones = b.node("SplitToSequence", {"X"}, {"chunks_1"});  // one per column, squeezed
  attrInt(ones, "axis", 1);
  attrInt(ones, "keepdims", 0);
  auto& stacked = b.node("ConcatFromSequence", {"chunks_1"}, {"stacked"});  // stacked back as columns
  attrInt(stacked, "axis", -1);
  attrInt(stacked, "new_axis", 1);
  b.output("last");
  b.output("count", {}, onnx::TensorProto::INT64);
  b.output("joined");
  b.output("stacked");
  addTyped(b.proto().add_output(), "chunks", ValueKind::SEQUENCE);
  auto session = createSession(b);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->outputs()[4].kind, ValueKind::SEQUENCE);
  const Tensor x = Tensor::fromVector<float>({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto outputs = session->runValues({{"X", x}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  const Tensor& last = (*outputs)[0].value.tensor();
  EXPECT_EQ(last.shape(), (Shape{2, 1}));
  EXPECT_EQ(values(last), (std::vector<float>{4, 9}));
  EXPECT_EQ((*outputs)[1].value.tensor().data<int64_t>()[0], 3);
  EXPECT_EQ(values((*outputs)[2].value.tensor()), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  EXPECT_EQ((*outputs)[3].value.tensor().shape(), (Shape{2, 5}));
  EXPECT_EQ(values((*outputs)[3].value.tensor()), values(x));
  const Value& chunks = (*outputs)[4].value;
  ASSERT_TRUE(chunks.isSequence());
  ASSERT_EQ(chunks.tensors().size(), 3u);
  EXPECT_EQ(chunks.tensors()[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(chunks.tensors()[1]), (std::vector<float>{2, 3, 7, 8}));

  // run() cannot return the sequence output.
  auto tensorsOnly = session->run({{"X", x}});
  ASSERT_FALSE(tensorsOnly.isOk());
  EXPECT_EQ(tensorsOnly.status().code(), StatusCode::INVALID_ARGUMENT);
}

TEST(SequenceValues, ConstructInsertAndBadPosition) {
  ModelBuilder b(17);
  b.input("A", {1});
  b.input("B", {1});
  b.node("SequenceConstruct", {"A", "A"}, {"seq"});
  b.node("SequenceInsert", {"seq", "B", "pos"}, {"out"});
  b.proto().add_input()->CopyFrom([] {
    onnx::ValueInfoProto v;
    v.set_name("pos");
    v.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    return v;
  }());
  addTyped(b.proto().add_output(), "out", ValueKind::SEQUENCE);
  auto session = createSession(b);
  ASSERT_TRUE(session);
  const Tensor a = Tensor::fromVector<float>({1}, {1}), bb = Tensor::fromVector<float>({1}, {2});
  auto outputs = session->runValues({{"A", a}, {"B", bb}, {"pos", Tensor::fromVector<int64_t>({}, {-1})}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  const Value& out = (*outputs)[0].value;
  ASSERT_EQ(out.tensors().size(), 3u);
  EXPECT_EQ(out.tensors()[1].data<float>()[0], 2.f);  // inserted before the last one
  auto bad = session->runValues({{"A", a}, {"B", bb}, {"pos", Tensor::fromVector<int64_t>({}, {3})}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos) << bad.status().message();
}

TEST(SequenceValues, OptionalInputsAndWrapping) {
  ModelBuilder b(16);
  addTyped(b.proto().add_input(), "maybe", ValueKind::OPTIONAL);
  b.input("X", {2});
  b.node("OptionalHasElement", {"maybe"}, {"has"});
  b.node("Optional", {"X"}, {"wrapped"});
  b.output("has", {}, onnx::TensorProto::BOOL);
  addTyped(b.proto().add_output(), "wrapped", ValueKind::OPTIONAL);
  auto session = createSession(b);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->inputs()[0].kind, ValueKind::OPTIONAL);
  const Tensor x = Tensor::fromVector<float>({2}, {5, 6});
  auto empty = session->runValues({{"maybe", Value::none()}, {"X", x}});
  ASSERT_TRUE(empty.isOk()) << empty.status().toString();
  EXPECT_FALSE((*empty)[0].value.tensor().data<bool>()[0]);
  ASSERT_TRUE((*empty)[1].value.hasElement());
  EXPECT_EQ(values((*empty)[1].value.element().tensor()), values(x));
  auto full = session->runValues({{"maybe", Value::optional(x)}, {"X", x}});
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  EXPECT_TRUE((*full)[0].value.tensor().data<bool>()[0]);
  // A tensor where an optional is declared is refused with the kinds named.
  auto wrongKind = session->runValues({{"maybe", x}, {"X", x}});
  ASSERT_FALSE(wrongKind.isOk());
  EXPECT_NE(wrongKind.status().message().find("expects a value of kind optional, got tensor"), std::string::npos)
      << wrongKind.status().message();
}

// The Vulkan EP takes the tensor nodes around the sequence ops and leaves those to the CPU EP.
TEST(SequenceValues, VulkanLeavesSequenceNodesToTheCpu) {
  REQUIRE_VULKAN();
  ModelBuilder b(17);
  b.input("X", {4});
  b.node("Add", {"X", "X"}, {"doubled"});
  b.node("SequenceConstruct", {"doubled", "X"}, {"seq"});
  *b.proto().add_initializer() = int64Scalar("zero", 0);
  b.node("SequenceAt", {"seq", "zero"}, {"first"});
  b.node("Relu", {"first"}, {"Y"});
  b.output("Y", {4});
  auto session = createSession(b, testing::vulkanOptions());
  ASSERT_TRUE(session);
  bool onCpu = false, onVulkan = false;
  for (const auto& p : session->partitions()) {
    onCpu |= p.executionProvider == "CPUExecutionProvider";
    onVulkan |= p.executionProvider == "VulkanExecutionProvider";
  }
  EXPECT_TRUE(onCpu);
  EXPECT_TRUE(onVulkan);
  auto outputs = session->run({{"X", Tensor::fromVector<float>({4}, {-1, 0, 1, 2})}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ(values((*outputs)[0].tensor), (std::vector<float>{0, 0, 2, 4}));
}

}  // namespace
}  // namespace kiln
