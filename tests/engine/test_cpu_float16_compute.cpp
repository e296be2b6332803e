// Float16 chains on the CPU EP compute in float32 with Casts only at their edges (ep/cpu/float16_compute.h), as
// onnxruntime's CPU EP does: a float16 Conv -> Relu -> Add -> MaxPool gives bit for bit its float32 twin rounded at
// the edges, the Conv's epilogue takes the Relu and Add, and float16 graph outputs keep their type and name. Also the
// float32 paths these chains lean on: the F16C array conversions and the 2x2 MaxPool loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ep/cpu/float16_compute.h"
#include "ep/cpu/graph_executor.h"
#include "ep/cpu/kernels/half_convert.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln::cpu {
namespace {

using testing::ModelBuilder;
using testing::initializer;

// Values already exact in float16, so both twins start from the same numbers.
std::vector<float> halfExact(size_t count, float scale, float seed) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = float(Float16(std::sin(seed + 0.37f * static_cast<float>(i)) * scale));
  return values;
}

// x (float32) -> Cast(to float16) -> Conv 3x3 -> Relu -> Add -> MaxPool 2x2 -> Cast(to float32) -> y, every tensor
// between the Casts of `type`; with `halfOutput`, the Relu's value is also a graph output of `type`.
// The float32 twin (type FLOAT) rounds the input and the result through float16 with Cast pairs, so it computes
// what the float16 model computes when only its edges round.
ir::Model convChain(int32_t type, bool halfOutput = false) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 8, 8}).output("y", {1, 4, 4, 4});
  if (halfOutput) m.output("r", {1, 4, 8, 8}, onnx::TensorProto::FLOAT16);
  testing::attrInt(m.node("Cast", {"x"}, {"xh"}, "cast_in"), "to", onnx::TensorProto::FLOAT16);
  std::string in = "xh";
  if (type == onnx::TensorProto::FLOAT) {
    testing::attrInt(m.node("Cast", {"xh"}, {"xf"}, "widen_in"), "to", onnx::TensorProto::FLOAT);
    in = "xf";
  }
  initializer(m, "w", {4, 3, 3, 3}, halfExact(4 * 3 * 9, 0.5f, 1), type);
  initializer(m, "b", {4}, halfExact(4, 0.2f, 2), type);
  initializer(m, "a", {1, 4, 1, 1}, halfExact(4, 0.3f, 3), type);
  testing::attrInts(m.node("Conv", {in, "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Add", {"r", "a"}, {"s"}, "add");
  auto& pool = m.node("MaxPool", {"s"}, {"p"}, "pool");
  testing::attrInts(pool, "kernel_shape", {2, 2});
  testing::attrInts(pool, "strides", {2, 2});
  std::string out = "p";
  if (type == onnx::TensorProto::FLOAT) {
    testing::attrInt(m.node("Cast", {"p"}, {"ph"}, "round_out"), "to", onnx::TensorProto::FLOAT16);
    out = "ph";
  }
  testing::attrInt(m.node("Cast", {out}, {"y"}, "cast_out"), "to", onnx::TensorProto::FLOAT);
  onnx::ModelProto proto = m.build();
  onnx_io::inferShapes(proto);
  auto model = onnx_io::modelFromProto(proto);
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  return model.isOk() ? std::move(model).value() : ir::Model{};
}

std::unique_ptr<GraphExecutor> executorFor(const ir::Model& model, bool float16InFloat32) {
  ExecutorConfig config;
  config.opsets = model.opsetImports;
  config.float16InFloat32 = float16InFloat32;
  auto executor = GraphExecutor::create(model.graph, config);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  return executor.isOk() ? std::move(executor).value() : nullptr;
}

std::vector<Tensor> chainInput() {
  std::vector<float> x(3 * 8 * 8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.3f * std::cos(0.29f * static_cast<float>(i));
  return {Tensor::fromVector<float>({1, 3, 8, 8}, x)};
}

std::vector<Tensor> runChain(GraphExecutor& executor) {
  auto outputs = executor.run(chainInput());
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  return outputs.isOk() ? std::move(outputs).value() : std::vector<Tensor>{};
}

size_t countOps(const ir::Graph& graph, const std::string& opType) {
  size_t count = 0;
  for (const auto& node : graph.nodes) count += node.opType == opType ? 1 : 0;
  return count;
}

TEST(CpuFloat16Compute, Float16ChainEqualsItsFloat32TwinRoundedAtTheEdges) {
  const ir::Model half = convChain(onnx::TensorProto::FLOAT16);
  const ir::Model twin = convChain(onnx::TensorProto::FLOAT);
  auto widened = executorFor(half, true);
  auto perNode = executorFor(half, false);
  auto reference = executorFor(twin, true);
  ASSERT_TRUE(widened && perNode && reference);
  const std::vector<Tensor> got = runChain(*widened), rounded = runChain(*perNode), want = runChain(*reference);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(rounded.size(), 1u);
  ASSERT_EQ(got[0].dtype(), DataType::FLOAT);
  ASSERT_EQ(got[0].shape(), (Shape{1, 4, 4, 4}));
  int64_t differsFromPerNode = 0;
  for (int64_t i = 0; i < got[0].numel(); ++i) {
    EXPECT_EQ(got[0].data<float>()[i], want[0].data<float>()[i]) << "at " << i;
    differsFromPerNode += got[0].data<float>()[i] != rounded[0].data<float>()[i] ? 1 : 0;
  }
  // Rounding after every node (the kernels' own float16 paths) gives other numbers: the check above has teeth.
  EXPECT_GT(differsFromPerNode, 0);
}

TEST(CpuFloat16Compute, ConvFusesItsEpilogueAndCastsOnlyAtTheEdges) {
  const ir::Model half = convChain(onnx::TensorProto::FLOAT16);
  auto widened = executorFor(half, true);
  auto perNode = executorFor(half, false);
  ASSERT_TRUE(widened && perNode);
  // Relu and Add run inside the Conv in float32; per node, the float16 Conv fuses nothing.
  EXPECT_EQ(widened->fusedNodeCount(), 2u);
  EXPECT_EQ(perNode->fusedNodeCount(), 0u);
  // The model's two Casts plus one at each edge of the chain (after cast_in, before cast_out).
  const ir::Graph& graph = widened->graph();
  EXPECT_EQ(countOps(graph, "Cast"), 4u);
  for (const auto& node : graph.nodes) {
    if (node.opType == "Cast") continue;
    for (const auto& name : node.inputs) {
      EXPECT_EQ(graph.initializers.count(name) ? graph.initializers.at(name).dtype() : graph.findValueInfo(name)->dtype,
                DataType::FLOAT)
          << node.name << " reads " << name;
    }
    for (const auto& name : node.outputs) EXPECT_EQ(graph.findValueInfo(name)->dtype, DataType::FLOAT) << name;
  }
  // The model's graph is not touched: the executor runs a rewritten copy.
  EXPECT_EQ(half.graph->initializers.at("w").dtype(), DataType::FLOAT16);
  EXPECT_EQ(countOps(*half.graph, "Cast"), 2u);
}

TEST(CpuFloat16Compute, Float16GraphOutputsKeepTheirTypeAndName) {
  const ir::Model half = convChain(onnx::TensorProto::FLOAT16, true);
  auto widened = executorFor(half, true);
  auto perNode = executorFor(half, false);
  ASSERT_TRUE(widened && perNode);
  const std::vector<Tensor> got = runChain(*widened), rounded = runChain(*perNode);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(rounded.size(), 2u);
  ASSERT_EQ(got[1].dtype(), DataType::FLOAT16);
  ASSERT_EQ(got[1].shape(), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(widened->graph().outputs[1].name, "r");
  EXPECT_EQ(widened->graph().outputs[1].dtype, DataType::FLOAT16);
  // Relu of one Conv: rounding once (at the output) or twice (after Conv and Relu) is the same float16 value.
  for (int64_t i = 0; i < got[1].numel(); ++i) {
    ASSERT_EQ(got[1].data<Float16>()[i].bits, rounded[1].data<Float16>()[i].bits) << "at " << i;
  }
}

// A graph with no float16 node to widen is left alone (no copy, no Casts); a float16 value whose type is not known
// keeps its node on the kernels' own float16 path.
TEST(CpuFloat16Compute, LeavesGraphsWithoutFloat16ChainsAlone) {
  const ir::Model twin = convChain(onnx::TensorProto::FLOAT);
  EXPECT_FALSE(hasFloat16ToCompute(*twin.graph));
  ir::Graph copy = *twin.graph;
  const Float16ComputeStats stats = computeFloat16InFloat32(copy);
  EXPECT_EQ(stats.nodes, 0);
  EXPECT_EQ(stats.casts, 0);
  EXPECT_EQ(copy.nodes.size(), twin.graph->nodes.size());

  ir::Model half = convChain(onnx::TensorProto::FLOAT16);
  half.graph->valueInfo.erase("s");  // Add's output and MaxPool's input: type unknown
  ir::Graph unknown = *half.graph;
  const Float16ComputeStats partial = computeFloat16InFloat32(unknown);
  EXPECT_EQ(partial.nodes, 2);  // Conv and Relu; Add and MaxPool keep float16
  auto executor = executorFor(half, true);
  ASSERT_TRUE(executor);
  EXPECT_EQ(runChain(*executor).size(), 1u);

  // bfloat16 keeps the kernels' own path (the Cast kernel truncates to bfloat16 where they round).
  ModelBuilder b(13);
  b.input("x", {2, 3}, onnx::TensorProto::BFLOAT16).output("y", {2, 3}, onnx::TensorProto::BFLOAT16);
  b.node("Relu", {"x"}, {"r"});
  b.node("Neg", {"r"}, {"y"});
  onnx::ModelProto proto = b.build();
  onnx_io::inferShapes(proto);
  auto brain = onnx_io::modelFromProto(proto);
  ASSERT_TRUE(brain.isOk()) << brain.status().toString();
  EXPECT_FALSE(hasFloat16ToCompute(*brain->graph));
}

// A widened value that an If body reads keeps its float16 name and type for the body (a Cast after its producer).
TEST(CpuFloat16Compute, BodiesReadWidenedValuesAsFloat16) {
  ModelBuilder m(13);
  m.input("x", {2, 3}, onnx::TensorProto::FLOAT16).input("cond", {}, onnx::TensorProto::BOOL);
  m.output("b", {2, 3}, onnx::TensorProto::FLOAT16);
  m.node("Relu", {"x"}, {"r"}, "relu");
  testing::GraphBuilder thenBody("then");
  thenBody.output("t", {2, 3}, onnx::TensorProto::FLOAT16);
  thenBody.node("Neg", {"r"}, {"t"});
  testing::GraphBuilder elseBody("else");
  elseBody.output("e", {2, 3}, onnx::TensorProto::FLOAT16);
  elseBody.node("Identity", {"r"}, {"e"});
  auto& branch = m.node("If", {"cond"}, {"b"});
  testing::attrGraph(branch, "then_branch", thenBody.proto());
  testing::attrGraph(branch, "else_branch", elseBody.proto());
  onnx::ModelProto proto = m.build();
  onnx_io::inferShapes(proto);
  auto model = onnx_io::modelFromProto(proto);
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  auto executor = executorFor(*model, true);
  ASSERT_TRUE(executor);
  EXPECT_EQ(countOps(executor->graph(), "Cast"), 2u);  // x into the Relu, r back to float16 for the bodies
  std::vector<Float16> x(6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = Float16(static_cast<float>(i) - 2.5f);
  for (bool cond : {true, false}) {
    auto out = executor->run(std::vector<Tensor>{Tensor::fromVector<Float16>({2, 3}, x), Tensor::fromVector<bool>({}, {cond})});
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    ASSERT_EQ((*out)[0].dtype(), DataType::FLOAT16);
    for (size_t i = 0; i < x.size(); ++i) {
      const float relu = std::max(0.f, static_cast<float>(i) - 2.5f);
      EXPECT_EQ(float((*out)[0].data<Float16>()[i]), cond ? -relu : relu) << i;
    }
  }
}

// MaxPool 2x2 stride 2 on float planes (its own loop) against the generic window loop on the same values as double,
// for even and odd sizes, floor and ceil mode, with NaNs and ties: the same maxima, NaNs where the generic loop has them.
TEST(CpuMaxPool2x2, MatchesTheGenericLoop) {
  for (int64_t rows : {4, 5}) {
    for (int64_t cols : {6, 7}) {
      for (int64_t ceil : {0, 1}) {
        std::vector<ir::Model> models;
        for (int32_t type : {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE}) {
          ModelBuilder m(13);
          m.input("x", {1, 2, rows, cols}, type).output("y", {}, type);
          auto& pool = m.node("MaxPool", {"x"}, {"y"});
          testing::attrInts(pool, "kernel_shape", {2, 2});
          testing::attrInts(pool, "strides", {2, 2});
          testing::attrInt(pool, "ceil_mode", ceil);
          auto model = onnx_io::modelFromProto(m.build());
          ASSERT_TRUE(model.isOk()) << model.status().toString();
          models.push_back(std::move(model).value());
        }
        std::vector<float> x(static_cast<size_t>(2 * rows * cols));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::round(3 * std::sin(0.7f * static_cast<float>(i)));
        x[3] = std::nanf("");
        x[static_cast<size_t>(cols)] = std::nanf("");
        std::vector<double> xd(x.begin(), x.end());
        auto single = executorFor(models[0], true);
        auto wide = executorFor(models[1], true);
        ASSERT_TRUE(single && wide);
        auto got = single->run(std::vector<Tensor>{Tensor::fromVector<float>({1, 2, rows, cols}, x)});
        auto want = wide->run(std::vector<Tensor>{Tensor::fromVector<double>({1, 2, rows, cols}, xd)});
        ASSERT_TRUE(got.isOk() && want.isOk());
        ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
        for (int64_t i = 0; i < (*got)[0].numel(); ++i) {
          const float g = (*got)[0].data<float>()[i];
          const double w = (*want)[0].data<double>()[i];
          if (std::isnan(w)) {
            EXPECT_TRUE(std::isnan(g)) << rows << "x" << cols << " ceil " << ceil << " at " << i;
          } else {
            EXPECT_EQ(static_cast<double>(g), w) << rows << "x" << cols << " ceil " << ceil << " at " << i;
          }
        }
      }
    }
  }
}

// The array conversions (F16C where the CPU has it) give Float16's scalar bits: every float16 value widened, and
// floats across the whole range (subnormals, ties, overflow, infinities, NaN) narrowed, with odd lengths for the tails.
TEST(CpuFloat16Compute, ArrayConversionsMatchTheScalarOnes) {
  std::vector<Float16> halves(65536 + 5);
  for (size_t i = 0; i < halves.size(); ++i) halves[i].bits = static_cast<uint16_t>(i);
  std::vector<float> widened(halves.size());
  halvesToFloats(halves.data(), widened.data(), static_cast<int64_t>(halves.size()));
  for (size_t i = 0; i < halves.size(); ++i) {
    const float expected = halves[i];
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(widened[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(widened[i]), std::bit_cast<uint32_t>(expected)) << i;
    }
  }
  std::vector<float> floats;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 0x1fffu) floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float v : {65504.f, 65519.f, 65520.f, 1e-8f, 2.98023224e-8f, 0.5f + 1.f / 4096.f, -0.f}) floats.push_back(v);
  std::vector<Float16> narrowed(floats.size());
  floatsToHalves(floats.data(), narrowed.data(), static_cast<int64_t>(floats.size()));
  for (size_t i = 0; i < floats.size(); ++i) {
    EXPECT_EQ(narrowed[i].bits, Float16(floats[i]).bits) << floats[i];
  }
}

}  // namespace
}  // namespace kiln::cpu
