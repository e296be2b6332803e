// .npy and TensorProto files.
#include <gtest/gtest.h>

#include "kiln/tensor_io.h"
#include "onnx/tensor_proto.h"
#include "test_models.h"

namespace kiln {
namespace {

TEST(TensorIo, NpyRoundTripKeepsTypeShapeAndValues) {
  testing::TempDir dir;
  const Tensor f = Tensor::fromVector<float>({2, 3}, {1, -2, 3.5f, 4, 5, 6});
  const Tensor i = Tensor::fromVector<int64_t>({4}, {1, -2, 1LL << 40, 0});
  const Tensor b = Tensor::fromVector<bool>({}, {true});
  for (const Tensor& t : {f, i, b}) {
    ASSERT_TRUE(writeNpyFile(dir.file("t.npy"), t).isOk());
    auto back = readNpyFile(dir.file("t.npy"));
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    EXPECT_EQ(back->dtype(), t.dtype());
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::memcmp(back->rawData(), t.rawData(), t.byteSize()), 0);
  }
}

TEST(TensorIo, RejectsNonNpyAndUnknownExtensions) {
  testing::TempDir dir;
  testing::writeBytes(dir.file("x.npy"), "not numpy");
  EXPECT_EQ(readNpyFile(dir.file("x.npy")).status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(readTensorFile(dir.file("x.txt")).status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(readTensorFile(dir.file("missing.npy")).status().code(), StatusCode::NO_SUCHFILE);
}

TEST(TensorIo, ReadsTensorProtoFiles) {
  testing::TempDir dir;
  onnx::TensorProto proto;
  proto.set_name("x");
  onnx_io::tensorToProto(Tensor::fromVector<int32_t>({3}, {7, 8, 9}), proto);
  testing::writeBytes(dir.file("x.pb"), proto.SerializeAsString());
  std::string name;
  auto t = readTensorProtoFile(dir.file("x.pb"), &name);
  ASSERT_TRUE(t.isOk());
  EXPECT_EQ(name, "x");
  EXPECT_EQ(t->data<int32_t>()[2], 9);
}

TEST(TensorIo, TensorProtoWithWrongRawSizeIsInvalidGraph) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(4);
  proto.set_raw_data("abc");
  EXPECT_EQ(onnx_io::tensorFromProto(proto).status().code(), StatusCode::INVALID_GRAPH);
}

TEST(TensorIo, HugeDeclaredShapeIsRejectedBeforeAllocating) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT8);
  for (int64_t d : {111, 112, 116, 95, 105, 110}) proto.add_dims(d);  // an OptionalProto misread as a tensor
  auto tensor = onnx_io::tensorFromProto(proto);
  ASSERT_EQ(tensor.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(tensor.status().message().find("impossibly large"), std::string::npos);
}

}  // namespace
}  // namespace kiln
