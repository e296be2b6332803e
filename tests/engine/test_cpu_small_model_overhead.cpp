// The CPU EP's small-model paths: the skinny float GEMM (ep/cpu/kernels/skinny_gemm.h) against a plain double
// loop for every shape it takes, and the executor's steady state (a session run many times with changing input
// shapes gives a fresh session's results; repeated runs of one shape take no new buffers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "ep/cpu/graph_executor.h"
#include "ep/cpu/kernels/skinny_gemm.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln::cpu {
namespace {

// C = alpha * op(A) * op(B) + beta * C in double, the oracle.
void referenceGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < K; ++k) {
        dot += double(transA ? A[k * lda + i] : A[i * lda + k]) * double(transB ? B[j * ldb + k] : B[k * ldb + j]);
      }
      float& c = C[i * ldc + j];
      c = static_cast<float>(alpha * dot + (beta == 0.f ? 0.0 : double(beta) * c));
    }
  }
}

TEST(SkinnyGemm, MatchesTheReferenceForEveryShapeItTakes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  int taken = 0;
  for (bool transA : {false, true}) {
    for (bool transB : {false, true}) {
      for (int64_t small = 1; small <= kSkinnyMax + 1; ++small) {
        for (int64_t big : {1, 5, 37}) {
          for (int64_t K : {1, 7, 8, 9, 133}) {
            for (float beta : {0.f, 1.f, 0.5f}) {
              for (bool smallRows : {false, true}) {
                const int64_t M = smallRows ? small : big, N = smallRows ? big : small;
                // Leading dimensions wider than the matrices, so strides are honoured.
                const int64_t lda = (transA ? M : K) + 3, ldb = (transB ? K : N) + 2, ldc = N + 1;
                std::vector<float> A(static_cast<size_t>((transA ? K : M) * lda)),
                    B(static_cast<size_t>((transB ? N : K) * ldb)), C(static_cast<size_t>(M * ldc));
                for (auto* v : {&A, &B, &C}) {
                  for (float& x : *v) x = value(rng);
                }
                // beta == 0 must not read C: garbage there (NaN) must not leak into the result.
                if (beta == 0.f) std::fill(C.begin(), C.end(), std::nanf(""));
                std::vector<float> expected = C;
                referenceGemm(transA, transB, M, N, K, 0.75f, A.data(), lda, B.data(), ldb, beta, expected.data(), ldc);
                std::vector<float> got = C;
                const bool took = skinnyGemm(transA, transB, M, N, K, 0.75f, A.data(), lda, B.data(), ldb, beta,
                                             got.data(), ldc);
                const bool shouldTake = (!transA && N <= kSkinnyMax) || (transB && M <= kSkinnyMax);
                ASSERT_EQ(took, shouldTake) << transA << transB << " M=" << M << " N=" << N;
                if (!took) {
                  EXPECT_TRUE(std::equal(got.begin(), got.end(), C.begin(), C.end(), [](float a, float b) {
                    return a == b || (std::isnan(a) && std::isnan(b));
                  })) << "a refused shape must leave C alone";
                  continue;
                }
                ++taken;
                for (int64_t i = 0; i < M; ++i) {
                  for (int64_t j = 0; j < N; ++j) {
                    const size_t at = static_cast<size_t>(i * ldc + j);
                    ASSERT_NEAR(got[at], expected[at], 1e-5f * (1 + K)) << transA << transB << " M=" << M << " N=" << N
                                                                         << " K=" << K << " at " << i << "," << j;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(taken, 0);
}

TEST(SkinnyGemm, RefusesEmptyProducts) {
  float a = 1.f, b = 1.f, c = 5.f;
  EXPECT_FALSE(skinnyGemm(false, false, 1, 1, 0, 1.f, &a, 1, &b, 1, 0.f, &c, 1));
  EXPECT_FALSE(skinnyGemm(false, false, 0, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1));
  EXPECT_EQ(c, 5.f);
}

// X [N, 4, L] (shape left free) -> Conv + Relu (fused) -> an If whose branches read the Relu output and X from the
// enclosing graph -> Flatten (a view) and a ReduceMean -> MatMul with few rows (the skinny GEMM): every part of the
// executor's static plan (bound slots, outer bindings, released and pooled storage) on shapes that change.
testing::ModelBuilder planModel() {
  testing::ModelBuilder m(13);
  m.input("X", {}).input("cond", {}, onnx::TensorProto::BOOL).output("flat").output("Y");
  std::vector<float> w(6 * 4 * 3), wm(6 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < wm.size(); ++i) wm[i] = std::cos(0.23f * static_cast<float>(i));
  m.initializer("W", {6, 4, 3}, w);
  m.initializer("B", {6}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f});
  m.initializer("Wm", {6, 3}, wm);
  auto& conv = m.node("Conv", {"X", "W", "B"}, {"c"});
  testing::attrInts(conv, "pads", {1, 1});
  m.node("Relu", {"c"}, {"r"});
  testing::GraphBuilder thenBody("then");
  thenBody.output("t");
  thenBody.node("Neg", {"r"}, {"t"});
  testing::GraphBuilder elseBody("else");
  elseBody.output("e");
  elseBody.node("ReduceMax", {"X"}, {"xm"});
  elseBody.node("Add", {"r", "xm"}, {"e"});
  auto& branch = m.node("If", {"cond"}, {"b"});
  testing::attrGraph(branch, "then_branch", thenBody.proto());
  testing::attrGraph(branch, "else_branch", elseBody.proto());
  auto& flatten = m.node("Flatten", {"b"}, {"flat"});
  testing::attrInt(flatten, "axis", 1);
  auto& mean = m.node("ReduceMean", {"b"}, {"pooled"});
  testing::attrInts(mean, "axes", {2});
  testing::attrInt(mean, "keepdims", 0);
  m.node("MatMul", {"pooled", "Wm"}, {"Y"});
  return m;
}

std::unique_ptr<GraphExecutor> planExecutor(const ir::Model& model, int threads) {
  ExecutorConfig config;
  config.opsets = model.opsetImports;
  config.intraOpThreads = threads;
  auto executor = GraphExecutor::create(model.graph, config);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  return executor.isOk() ? std::move(executor).value() : nullptr;
}

std::vector<Tensor> planInputs(int64_t n, int64_t length, bool cond) {
  std::vector<float> x(static_cast<size_t>(n * 4 * length));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * static_cast<float>(i) + static_cast<float>(length));
  return {Tensor::fromVector<float>({n, 4, length}, x), Tensor::fromVector<bool>({}, {cond})};
}

std::vector<std::vector<float>> planOutputs(GraphExecutor& executor, const std::vector<Tensor>& inputs) {
  auto outputs = executor.run(inputs);
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  std::vector<std::vector<float>> values;
  if (!outputs.isOk()) return values;
  for (const Tensor& t : *outputs) values.emplace_back(t.data<float>(), t.data<float>() + t.numel());
  return values;
}

TEST(CpuExecutionPlan, ChangingShapesGiveAFreshExecutorsResults) {
  auto model = onnx_io::modelFromProto(planModel().build());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  for (int threads : {1, 2}) {
    auto reused = planExecutor(*model, threads);
    ASSERT_TRUE(reused);
    const std::vector<std::tuple<int64_t, int64_t, bool>> shapes = {
        {1, 9, true}, {3, 2, false}, {1, 1, true}, {2, 40, false}, {1, 9, false}, {4, 5, true}, {1, 9, true}};
    for (int round = 0; round < 3; ++round) {
      for (const auto& [n, length, cond] : shapes) {
        const auto inputs = planInputs(n, length, cond);
        auto fresh = planExecutor(*model, threads);
        ASSERT_TRUE(fresh);
        const auto expected = planOutputs(*fresh, inputs);
        ASSERT_EQ(expected.size(), 2u);
        EXPECT_EQ(expected[0].size(), static_cast<size_t>(n * 6 * length));
        EXPECT_EQ(planOutputs(*reused, inputs), expected)
            << "threads " << threads << " round " << round << " shape " << n << "x4x" << length << " cond " << cond;
      }
    }
  }
}

TEST(CpuExecutionPlan, AFailedRunLeavesNothingBehindForTheNext) {
  auto model = onnx_io::modelFromProto(planModel().build());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  auto executor = planExecutor(*model, 2);
  ASSERT_TRUE(executor);
  const auto inputs = planInputs(2, 7, false);
  const auto expected = planOutputs(*executor, inputs);
  // Three channels where the Conv wants four: the run fails at the Conv and names it.
  const std::vector<Tensor> badInputs{Tensor(DataType::FLOAT, {1, 3, 7}), inputs[1]};
  auto bad = executor->run(badInputs);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("Conv"), std::string::npos) << bad.status().toString();
  EXPECT_EQ(planOutputs(*executor, inputs), expected);
}

TEST(CpuExecutionPlan, SteadyRunsTakeNoNewBuffers) {
  auto model = onnx_io::modelFromProto(planModel().build());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  auto executor = planExecutor(*model, 2);
  ASSERT_TRUE(executor);
  const auto big = planInputs(2, 64, true), small = planInputs(1, 16, false);
  planOutputs(*executor, big);
  planOutputs(*executor, small);
  // Outputs handed to the caller go back to the pool when dropped: after one run of each shape, alternating runs
  // are served from the pool alone.
  const auto warm = executor->bufferStats();
  EXPECT_GT(warm.allocated, 0);
  EXPECT_GT(warm.allocatedBytes, 0u);
  for (int i = 0; i < 10; ++i) planOutputs(*executor, i % 2 ? small : big);
  const auto steady = executor->bufferStats();
  EXPECT_EQ(steady.allocated, warm.allocated);
  EXPECT_EQ(steady.allocatedBytes, warm.allocatedBytes);
  EXPECT_GT(steady.reused, warm.reused);
}

// A model whose every shape inference fixes: Conv (+ fused Relu), MaxPool, a Flatten view, Mul, Softmax.
onnx::ModelProto staticModel() {
  testing::ModelBuilder m(13);
  m.input("X", {1, 4, 32, 32}).output("Y");
  std::vector<float> w(8 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.29f * static_cast<float>(i));
  m.initializer("W", {8, 4, 3, 3}, w);
  auto& conv = m.node("Conv", {"X", "W"}, {"c"});
  testing::attrInts(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"});
  auto& pool = m.node("MaxPool", {"r"}, {"p"});
  testing::attrInts(pool, "kernel_shape", {2, 2});
  testing::attrInts(pool, "strides", {2, 2});
  m.node("Flatten", {"p"}, {"flat"});
  m.node("Mul", {"flat", "flat"}, {"sq"});
  m.node("Softmax", {"sq"}, {"Y"});
  onnx::ModelProto proto = m.build();
  onnx_io::inferShapes(proto);
  return proto;
}

// With every shape static, the session's executor reserves the first run's buffers when it is created: the first
// run takes nothing new from the system, and its results are those of an executor that planned nothing.
TEST(CpuExecutionPlan, StaticShapesArePlannedAtCreation) {
  auto model = onnx_io::modelFromProto(staticModel());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  std::vector<float> x(4 * 32 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.07f * static_cast<float>(i));
  const std::vector<Tensor> inputs{Tensor::fromVector<float>({1, 4, 32, 32}, x)};
  for (int threads : {1, 2}) {
    ExecutorConfig config;
    config.opsets = model->opsetImports;
    config.intraOpThreads = threads;
    auto plain = GraphExecutor::create(model->graph, config);
    ASSERT_TRUE(plain.isOk()) << plain.status().toString();
    EXPECT_EQ((*plain)->bufferStats().allocated, 0);  // planning is the session's choice, not every executor's
    config.prepareFirstRun = true;
    auto planned = GraphExecutor::create(model->graph, config);
    ASSERT_TRUE(planned.isOk()) << planned.status().toString();
    const auto created = (*planned)->bufferStats();
    EXPECT_GT(created.allocated, 0);
    EXPECT_EQ(created.pooledBytes, created.allocatedBytes);  // all waiting for the first run
    const auto expected = planOutputs(**plain, inputs);
    EXPECT_EQ(planOutputs(**planned, inputs), expected) << "threads " << threads;
    const auto first = (*planned)->bufferStats();
    EXPECT_EQ(first.allocated, created.allocated) << "threads " << threads;
    EXPECT_EQ(first.allocatedBytes, created.allocatedBytes);
    EXPECT_GE(first.reused, 3) << "conv, pool, mul and softmax outputs from the plan";
  }
}

// A value over the session's tensor limit means no plan at all: the run allocates (and refuses) as without one.
TEST(CpuExecutionPlan, NothingIsPlannedWhenAValuePassesTheTensorLimit) {
  auto model = onnx_io::modelFromProto(staticModel());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.prepareFirstRun = true;
  config.maxTensorBytes = 1024;  // the 1x4x32x32 input alone takes 16 KiB
  auto executor = GraphExecutor::create(model->graph, config);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  EXPECT_EQ((*executor)->plannedBuffers(), 0u);
  EXPECT_EQ((*executor)->bufferStats().allocated, 0);
}

// A released buffer serves a request down to half its size, not smaller (a tiny tensor must not pin a big buffer).
TEST(CpuExecutionPlan, PoolServesRequestsDownToHalfABuffer) {
  BufferPool pool;
  { Tensor a = pool.allocate(DataType::FLOAT, {1000}); }
  { Tensor b = pool.allocate(DataType::FLOAT, {600}); }  // 2400 bytes from the 4032-byte buffer
  EXPECT_EQ(pool.stats().allocated, 1);
  { Tensor c = pool.allocate(DataType::FLOAT, {400}); }  // under half: a buffer of its own
  EXPECT_EQ(pool.stats().allocated, 2);
  EXPECT_EQ(pool.stats().allocatedBytes, 4032u + 1600u);
}

}  // namespace
}  // namespace kiln::cpu
