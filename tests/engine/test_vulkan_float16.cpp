// float16 on the Vulkan EP: a small float16 CNN (Casts at the edges) runs in one Vulkan partition with no CPU
// nodes and matches the float32 twin of the model on the CPU EP within the float16 tolerance (atol 5e-3 *
// max(1, max|ref|), rtol 1e-2); without 16-bit storage the kernels leave float16 nodes to the CPU EP.
// kiln.vulkan.fp16=1 compiles the float32 twin with float16 weights and activations: half the weight bytes, only
// float16 SPIR-V variants (and the edge Casts), the same tolerance.
// Skips without a Vulkan device unless KILN_REQUIRE_VULKAN=1 (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/vulkan/float16_storage.h"
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/vulkan_device.h"
#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::initializer;

// Deterministic weights in [-scale, scale], already rounded to float16 so both twins hold the same values.
std::vector<float> weights(size_t count, float scale, float seed) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = float(Float16(std::sin(seed + 0.37f * static_cast<float>(i)) * scale));
  }
  return values;
}

// Cast(x) -> Conv -> Relu -> MaxPool -> Conv 1x1 -> Add -> Concat -> Resize (linear) -> MaxPool -> Reshape
// -> MatMul -> Add -> Softmax -> Cast: every float tensor inside is `type`; input and outputs are float32.
std::string smallCnn(const testing::TempDir& dir, int32_t type, const std::string& file) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 16, 16});
  auto& castIn = m.node("Cast", {"x"}, {"xh"}, "cast_in");
  testing::attrInt(castIn, "to", type);
  initializer(m, "w1", {8, 3, 3, 3}, weights(8 * 3 * 9, 0.4f, 1), type);
  initializer(m, "b1", {8}, weights(8, 0.1f, 2), type);
  initializer(m, "w2", {8, 8, 1, 1}, weights(64, 0.4f, 3), type);
  initializer(m, "b2", {8}, weights(8, 0.1f, 4), type);
  initializer(m, "w3", {256, 10}, weights(2560, 0.2f, 5), type);
  initializer(m, "b3", {10}, weights(10, 0.1f, 6), type);
  initializer(m, "scales", {4}, {1, 1, 2, 2}, onnx::TensorProto::FLOAT);
  onnx::TensorProto& shape = *m.proto().add_initializer();
  shape.set_name("flat_shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(2);
  shape.add_int64_data(1);
  shape.add_int64_data(256);
  auto& conv1 = m.node("Conv", {"xh", "w1", "b1"}, {"c1"}, "conv1");
  testing::attrInts(conv1, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu");
  auto& pool1 = m.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  testing::attrInts(pool1, "kernel_shape", {2, 2});
  testing::attrInts(pool1, "strides", {2, 2});
  m.node("Conv", {"p1", "w2", "b2"}, {"c2"}, "conv2");
  m.node("Add", {"c2", "p1"}, {"a1"}, "add");
  auto& concat = m.node("Concat", {"a1", "p1"}, {"cat"}, "concat");
  testing::attrInt(concat, "axis", 1);
  auto& resize = m.node("Resize", {"cat", "", "scales"}, {"rs"}, "resize");
  resize.add_attribute()->set_name("mode");
  resize.mutable_attribute(0)->set_type(onnx::AttributeProto::STRING);
  resize.mutable_attribute(0)->set_s("linear");
  auto& pool2 = m.node("MaxPool", {"rs"}, {"p2"}, "pool2");
  testing::attrInts(pool2, "kernel_shape", {4, 4});
  testing::attrInts(pool2, "strides", {4, 4});
  m.node("Reshape", {"p2", "flat_shape"}, {"flat"}, "reshape");
  m.node("MatMul", {"flat", "w3"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "b3"}, {"logits"}, "bias");
  auto& softmax = m.node("Softmax", {"logits"}, {"sm"}, "softmax");
  testing::attrInt(softmax, "axis", -1);
  testing::attrInt(m.node("Cast", {"sm"}, {"y"}, "cast_out"), "to", onnx::TensorProto::FLOAT);
  testing::attrInt(m.node("Cast", {"logits"}, {"z"}, "cast_logits"), "to", onnx::TensorProto::FLOAT);
  m.output("y", {1, 10});
  m.output("z", {1, 10});
  return m.save(dir.file(file));
}

Tensor cnnInput() {
  std::vector<float> values(3 * 16 * 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.11f * static_cast<float>(i)) * 2.0f;
  return Tensor::fromVector<float>({1, 3, 16, 16}, values);
}

// The float16 tolerance this issue states: |a - e| <= atol + rtol * |e| with atol 5e-3 * max(1, max|e|), rtol 1e-2.
void expectWithinFloat16Tolerance(const Tensor& expected, const Tensor& actual, const std::string& what) {
  ASSERT_EQ(expected.shape(), actual.shape()) << what;
  float maxRef = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) maxRef = std::max(maxRef, std::fabs(expected.data<float>()[i]));
  const float atol = 5e-3f * std::max(1.0f, maxRef);
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const float e = expected.data<float>()[i], a = actual.data<float>()[i];
    EXPECT_LE(std::fabs(a - e), atol + 1e-2f * std::fabs(e)) << what << "[" << i << "]: " << a << " vs " << e;
  }
}

TEST(VulkanFloat16, SmallCnnRunsEntirelyOnVulkanAndMatchesFloat32) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string half = smallCnn(dir, onnx::TensorProto::FLOAT16, "cnn_fp16.onnx");
  const std::string single = smallCnn(dir, onnx::TensorProto::FLOAT, "cnn_fp32.onnx");
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(single, cpuOptions);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto vulkan = Session::create(half, options);
  ASSERT_TRUE(vulkan.isOk()) << vulkan.status().toString();

  const PartitionReport& report = (*vulkan)->partitionReport();
  const auto perEp = nodesPerExecutionProvider(report);
  EXPECT_EQ(perEp.count("CPUExecutionProvider"), 0u);
  EXPECT_EQ(compiledPartitionCount(report), 1);

  auto expected = (*cpu)->run({{"x", cnnInput()}});
  auto actual = (*vulkan)->run({{"x", cnnInput()}});
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  ASSERT_EQ(actual->size(), 2u);
  expectWithinFloat16Tolerance((*expected)[0].tensor, (*actual)[0].tensor, "softmax");
  expectWithinFloat16Tolerance((*expected)[1].tensor, (*actual)[1].tensor, "logits");
}

ContextBinaryInfo compileWithFp16(const testing::TempDir& dir, const std::string& model, const std::string& name,
                                  const char* fp16);

// The other kernel families in `type`: ConvTranspose, BatchNormalization, InstanceNormalization, a fused
// Mul/Add/Sigmoid chain, Pad, Transpose, LayerNormalization, ReduceMean, Less + Where, Gather, Clip,
// GlobalAveragePool, Flatten, Gemm.
std::string opMix(const testing::TempDir& dir, int32_t type, const std::string& file) {
  ModelBuilder m(17);
  m.input("x", {2, 4, 6, 6});
  testing::attrInt(m.node("Cast", {"x"}, {"xh"}), "to", type);
  initializer(m, "wt", {4, 3, 2, 2}, weights(48, 0.5f, 7), type);
  initializer(m, "bn_s", {3}, {1.5f, 0.5f, 1.0f}, type);
  initializer(m, "bn_b", {3}, {0.1f, -0.2f, 0.3f}, type);
  initializer(m, "bn_m", {3}, {0.05f, -0.1f, 0.0f}, type);
  initializer(m, "bn_v", {3}, {2.0f, 0.5f, 1.0f}, type);
  initializer(m, "in_s", {3}, {1.0f, 2.0f, 0.5f}, type);
  initializer(m, "in_b", {3}, {0.0f, 0.25f, -0.5f}, type);
  initializer(m, "pad_value", {}, {0.5f}, type);
  initializer(m, "ln_g", {3}, {1.0f, 0.75f, 1.25f}, type);
  initializer(m, "ln_b", {3}, {0.1f, 0.0f, -0.1f}, type);
  initializer(m, "zero", {}, {0.0f}, type);
  initializer(m, "two", {}, {2.0f}, type);
  initializer(m, "low", {}, {-0.5f}, type);
  initializer(m, "high", {}, {0.5f}, type);
  initializer(m, "wg", {3, 5}, weights(15, 0.8f, 8), type);
  initializer(m, "cg", {5}, weights(5, 0.2f, 9), type);
  auto ints = [&](const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto& t = *m.proto().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
  };
  ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  ints("indices", {0, 2, 5});
  testing::attrInts(m.node("ConvTranspose", {"xh", "wt"}, {"ct"}), "strides", {2, 2});
  m.node("BatchNormalization", {"ct", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"});
  m.node("InstanceNormalization", {"bn", "in_s", "in_b"}, {"in"});
  m.node("Mul", {"in", "two"}, {"in2"});  // Mul -> Add -> Sigmoid: one fused elementwise chain on the device
  m.node("Add", {"in2", "low"}, {"in3"});
  m.node("Sigmoid", {"in3"}, {"sg"});
  m.node("Pad", {"sg", "pads", "pad_value"}, {"pd"});
  testing::attrInts(m.node("Transpose", {"pd"}, {"tr"}), "perm", {0, 2, 3, 1});
  m.node("LayerNormalization", {"tr", "ln_g", "ln_b"}, {"ln"});
  testing::attrInts(m.node("ReduceMean", {"ln"}, {"rm"}), "axes", {3});
  m.node("Less", {"rm", "zero"}, {"lt"});
  m.node("Where", {"lt", "rm", "two"}, {"wh"});
  testing::attrInt(m.node("Gather", {"wh", "indices"}, {"ga"}), "axis", 1);
  m.node("Clip", {"ga", "low", "high"}, {"cl"});
  m.node("GlobalAveragePool", {"cl"}, {"gp"});
  m.node("Flatten", {"gp"}, {"fl"});
  m.node("Gemm", {"fl", "wg", "cg"}, {"gm"});
  testing::attrInt(m.node("Cast", {"gm"}, {"y"}), "to", onnx::TensorProto::FLOAT);
  testing::attrInt(m.node("Cast", {"ln"}, {"z"}), "to", onnx::TensorProto::FLOAT);
  m.output("y", {2, 5});
  m.output("z", {2, 14, 14, 3});
  return m.save(dir.file(file));
}

TEST(VulkanFloat16, OtherKernelFamiliesRunOnVulkanAndMatchFloat32) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string half = opMix(dir, onnx::TensorProto::FLOAT16, "mix_fp16.onnx");
  const std::string single = opMix(dir, onnx::TensorProto::FLOAT, "mix_fp32.onnx");
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(single, cpuOptions);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto vulkan = Session::create(half, options);
  ASSERT_TRUE(vulkan.isOk()) << vulkan.status().toString();
  EXPECT_EQ(nodesPerExecutionProvider((*vulkan)->partitionReport()).count("CPUExecutionProvider"), 0u);
  std::vector<float> values(2 * 4 * 6 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.7f * static_cast<float>(i)) * 1.5f;
  const Tensor x = Tensor::fromVector<float>({2, 4, 6, 6}, values);
  auto expected = (*cpu)->run({{"x", x}});
  auto actual = (*vulkan)->run({{"x", x}});
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  expectWithinFloat16Tolerance((*expected)[0].tensor, (*actual)[0].tensor, "gemm");
  expectWithinFloat16Tolerance((*expected)[1].tensor, (*actual)[1].tensor, "layernorm");
  const ContextBinaryInfo compiled = compileWithFp16(dir, half, "mix", "0");
  ASSERT_EQ(compiled.graphs.size(), 1u);
  const auto& ops = compiled.graphs[0].opTypes;
  EXPECT_NE(std::find(ops.begin(), ops.end(), "kiln.FusedElementwise"), ops.end());
  // BatchNormalization folded into the float16 ConvTranspose weights.
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "BatchNormalization"), ops.end());

  // The float32 twin with kiln.vulkan.fp16=1 stores the same families as float16.
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.fp16", "1").isOk());
  auto stored = Session::create(single, options);
  ASSERT_TRUE(stored.isOk()) << stored.status().toString();
  auto storedOut = (*stored)->run({{"x", x}});
  ASSERT_TRUE(storedOut.isOk()) << storedOut.status().toString();
  expectWithinFloat16Tolerance((*expected)[0].tensor, (*storedOut)[0].tensor, "fp16=1 gemm");
  expectWithinFloat16Tolerance((*expected)[1].tensor, (*storedOut)[1].tensor, "fp16=1 layernorm");
}

// A bidirectional LSTM with bias and initial states in `type`, all three outputs cast back to float32.
std::string lstm(const testing::TempDir& dir, int32_t type, const std::string& file) {
  ModelBuilder m(14);
  m.input("x", {5, 2, 3});
  testing::attrInt(m.node("Cast", {"x"}, {"xh"}), "to", type);
  initializer(m, "w", {2, 16, 3}, weights(96, 0.5f, 10), type);
  initializer(m, "r", {2, 16, 4}, weights(128, 0.5f, 11), type);
  initializer(m, "b", {2, 32}, weights(64, 0.2f, 12), type);
  initializer(m, "h0", {2, 2, 4}, weights(16, 0.3f, 13), type);
  initializer(m, "c0", {2, 2, 4}, weights(16, 0.3f, 14), type);
  auto& node = m.node("LSTM", {"xh", "w", "r", "b", "", "h0", "c0"}, {"y", "yh", "yc"});
  testing::attrInt(node, "hidden_size", 4);
  node.add_attribute()->set_name("direction");
  node.mutable_attribute(1)->set_type(onnx::AttributeProto::STRING);
  node.mutable_attribute(1)->set_s("bidirectional");
  const char* outputs[3][2] = {{"y", "y32"}, {"yh", "yh32"}, {"yc", "yc32"}};
  for (const auto& [from, to] : outputs) testing::attrInt(m.node("Cast", {from}, {to}), "to", onnx::TensorProto::FLOAT);
  m.output("y32", {5, 2, 2, 4});
  m.output("yh32", {2, 2, 4});
  m.output("yc32", {2, 2, 4});
  return m.save(dir.file(file));
}

TEST(VulkanFloat16, LstmRunsOnVulkanAndMatchesFloat32) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string half = lstm(dir, onnx::TensorProto::FLOAT16, "lstm_fp16.onnx");
  const std::string single = lstm(dir, onnx::TensorProto::FLOAT, "lstm_fp32.onnx");
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(single, cpuOptions);
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto vulkan = Session::create(half, options);
  ASSERT_TRUE(cpu.isOk() && vulkan.isOk()) << vulkan.status().toString();
  std::vector<float> values(30);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(1.3f * static_cast<float>(i));
  const Tensor x = Tensor::fromVector<float>({5, 2, 3}, values);
  auto expected = (*cpu)->run({{"x", x}});
  auto actual = (*vulkan)->run({{"x", x}});
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  const char* names[3] = {"Y", "Y_h", "Y_c"};
  for (size_t i = 0; i < 3; ++i) expectWithinFloat16Tolerance((*expected)[i].tensor, (*actual)[i].tensor, names[i]);
}

// Compiles `model` to a ctx model in `dir` (`name`_ctx.onnx) with the given kiln.vulkan.fp16 value and returns
// what its binary holds.
ContextBinaryInfo compileWithFp16(const testing::TempDir& dir, const std::string& model, const std::string& name,
                                  const char* fp16) {
  SessionOptions options = testing::vulkanOptions();
  EXPECT_TRUE(options.addConfigEntry("kiln.vulkan.fp16", fp16).isOk());
  ModelCompilationOptions compile(options);
  compile.setInputModelPath(model);
  compile.setOutputModelPath(dir.file(name + "_ctx.onnx"));
  auto compiled = compileModel(compile);
  EXPECT_TRUE(compiled.isOk()) << compiled.status().toString();
  auto info = inspectContextBinary(dir.file(name + "_vulkan.bin"));
  EXPECT_TRUE(info.isOk()) << info.status().toString();
  return info.isOk() ? *info : ContextBinaryInfo{};
}

TEST(VulkanFloat16, Fp16ConfigStoresAFloat32ModelAsFloat16) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string single = smallCnn(dir, onnx::TensorProto::FLOAT, "cnn_fp32.onnx");
  const ContextBinaryInfo plain = compileWithFp16(dir, single, "plain", "0");
  const ContextBinaryInfo half = compileWithFp16(dir, single, "half", "1");
  ASSERT_GT(plain.weightBytes, 0u);
  // Every float weight halves; the int64 shape and Resize's float32 scales stay as they are.
  EXPECT_LT(static_cast<double>(half.weightBytes), 0.55 * static_cast<double>(plain.weightBytes));
  for (const auto& key : plain.spirvModules) EXPECT_EQ(key.find("FP16_STORAGE"), std::string::npos) << key;
  for (const auto& key : half.spirvModules) {
    // Float16 variants only (FP16_STORAGE, or ELEM16 for copies), besides the Casts at the float32 edges.
    const bool float16 = key.find("FP16_STORAGE=1") != std::string::npos || key.find("ELEM16=1") != std::string::npos;
    EXPECT_TRUE(float16 || key.rfind("cast|", 0) == 0) << key;
  }

  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(single, cpuOptions);
  auto vulkan = Session::create(dir.file("half_ctx.onnx"), testing::vulkanOptions());
  ASSERT_TRUE(cpu.isOk() && vulkan.isOk()) << vulkan.status().toString();
  EXPECT_EQ(nodesPerExecutionProvider((*vulkan)->partitionReport()).count("CPUExecutionProvider"), 0u);
  auto expected = (*cpu)->run({{"x", cnnInput()}});
  auto actual = (*vulkan)->run({{"x", cnnInput()}});
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  expectWithinFloat16Tolerance((*expected)[0].tensor, (*actual)[0].tensor, "softmax");
  expectWithinFloat16Tolerance((*expected)[1].tensor, (*actual)[1].tensor, "logits");
}

// The documented fallback: a device without storageBuffer16BitAccess claims no float16 node (they run on the
// CPU EP), views included, while the same node in float32 stays claimed.
TEST(VulkanFloat16, DeviceWithout16BitStorageLeavesFloat16NodesToTheCpu) {
  vk::DeviceInfo device;
  device.storageBuffer16Bit = false;
  ir::Node node;
  node.opType = "Relu";
  node.inputs = {"x"};
  node.outputs = {"y"};
  for (const auto& [op, type] : {std::pair{"Relu", DataType::FLOAT16}, std::pair{"Relu", DataType::FLOAT},
                                  std::pair{"Flatten", DataType::FLOAT16}}) {
    node.opType = op;
    ir::ValueInfo x, y;
    x.dtype = y.dtype = type;
    vk::SupportQuery query{node, 13, device, {nullptr}, {&x}, {&y}, {false}};
    const vk::KernelEntry* entry = vk::findKernel("", op, 13);
    ASSERT_NE(entry, nullptr);
    const NodeSupport support = entry->support(query);
    EXPECT_EQ(support.supported, type == DataType::FLOAT) << op << " " << dataTypeName(type) << ": " << support.reason;
    if (type == DataType::FLOAT16) {
      EXPECT_NE(support.reason.find("storageBuffer16BitAccess"), std::string::npos);
    }
    device.storageBuffer16Bit = true;
    EXPECT_TRUE(entry->support(query).supported) << dataTypeName(type);
    device.storageBuffer16Bit = false;
  }
}

// The kiln.vulkan.fp16 rewrite around a node that stays float32: Casts only at the type boundaries, the partition's
// input and output keep their names and float32, and an initializer read by both kinds of node is stored twice.
TEST(VulkanFloat16, StorageRewriteCastsOnlyAtTypeBoundaries) {
  ir::Graph graph;
  auto value = [&](const std::string& name) {
    ir::ValueInfo info;
    info.name = name;
    info.dtype = DataType::FLOAT;
    return info;
  };
  graph.inputs = {value("x")};
  graph.outputs = {value("out")};
  for (const char* name : {"v1", "v2"}) graph.valueInfo[name] = value(name);
  graph.initializers["w"] = Tensor::fromVector<float>({1}, {0.5f});
  auto node = [](const char* op, std::vector<std::string> in, std::string out) {
    ir::Node n;
    n.opType = op;
    n.inputs = std::move(in);
    n.outputs = {std::move(out)};
    return n;
  };
  graph.nodes = {node("Mul", {"x", "w"}, "v1"), node("Erf", {"v1", "w"}, "v2"), node("Relu", {"v2"}, "out")};
  const vk::Float16StorageStats stats = vk::storeFloatsAsFloat16(graph, {"out"}, [](const ir::Graph& half) {
    EXPECT_EQ(half.initializers.at("w").dtype(), DataType::FLOAT16);
    return std::vector<bool>{true, false, true};  // the middle node's kernel takes no float16
  });
  EXPECT_EQ(stats.nodes, 2);
  EXPECT_EQ(stats.initializers, 1);
  EXPECT_EQ(stats.casts, 4);
  std::vector<std::string> steps;
  for (const auto& n : graph.nodes) {
    std::string step = n.opType + "(";
    for (const auto& in : n.inputs) step += in + ",";
    steps.push_back(step + ")->" + n.outputs[0]);
  }
  const std::vector<std::string> expected = {
      "Cast(x,)->x_kiln_fp16",         "Mul(x_kiln_fp16,w_kiln_fp16,)->v1", "Cast(v1,)->v1_kiln_fp32",
      "Erf(v1_kiln_fp32,w,)->v2",      "Cast(v2,)->v2_kiln_fp16",          "Relu(v2_kiln_fp16,)->out_kiln_fp16",
      "Cast(out_kiln_fp16,)->out"};
  EXPECT_EQ(steps, expected);
  EXPECT_EQ(graph.findValueInfo("v1")->dtype, DataType::FLOAT16);
  EXPECT_EQ(graph.findValueInfo("v2")->dtype, DataType::FLOAT);
  EXPECT_EQ(graph.findValueInfo("out")->dtype, DataType::FLOAT);
  EXPECT_EQ(graph.findValueInfo("out_kiln_fp16")->dtype, DataType::FLOAT16);
  EXPECT_EQ(graph.initializers.at("w").dtype(), DataType::FLOAT);
  EXPECT_EQ(graph.initializers.at("w_kiln_fp16").dtype(), DataType::FLOAT16);
}

// Constants float16 cannot hold (a finite value above 65504) keep their node float32.
TEST(VulkanFloat16, StorageRewriteKeepsNodesWithOverflowingConstantsFloat32) {
  ir::Graph graph;
  ir::ValueInfo x;
  x.name = "x";
  x.dtype = DataType::FLOAT;
  graph.inputs = {x};
  x.name = "y";
  graph.outputs = {x};
  graph.initializers["big"] = Tensor::fromVector<float>({1}, {1e6f});
  ir::Node mul;
  mul.opType = "Mul";
  mul.inputs = {"x", "big"};
  mul.outputs = {"y"};
  graph.nodes = {mul};
  const vk::Float16StorageStats stats =
      vk::storeFloatsAsFloat16(graph, {"y"}, [](const ir::Graph&) { return std::vector<bool>{true}; });
  EXPECT_EQ(stats.nodes, 0);
  EXPECT_EQ(stats.casts, 0);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<std::string>{"x", "big"}));
  EXPECT_EQ(graph.initializers.at("big").dtype(), DataType::FLOAT);
}

}  // namespace
}  // namespace kiln
