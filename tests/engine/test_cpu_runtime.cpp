// The CPU EP's runtime machinery: the intra-op thread pool, storage reuse across runs, and elementwise chains fused
// into convolutions (same results as the unfused nodes, bit for bit, on any thread count).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ep/cpu/buffer_pool.h"
#include "ep/cpu/graph_executor.h"
#include "ep/cpu/thread_pool.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

TEST(CpuThreadPool, CoversEveryIndexOnceForAnyThreadCountAndGrain) {
  for (int threads : {1, 2, 4}) {
    cpu::ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 100, 10007}) {
      for (int64_t grain : {1, 3, 64, 100000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallelFor(n, grain, [&](int64_t begin, int64_t end) {
          EXPECT_LE(0, begin);
          EXPECT_LT(begin, end);
          EXPECT_LE(end, n);
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " " << n << " " << grain;
      }
    }
  }
}

TEST(CpuThreadPool, NestedAndConcurrentCallsComplete) {
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  auto job = [&] {
    for (int rep = 0; rep < 200; ++rep) {
      pool.parallelFor(64, 1, [&](int64_t begin, int64_t end) {
        // A nested call runs inline on the calling thread.
        pool.parallelFor(end - begin, 1, [&](int64_t b, int64_t e) { sum += e - b; });
      });
    }
  };
  std::thread other(job);
  job();
  other.join();
  EXPECT_EQ(sum.load(), 2 * 200 * 64);
}

TEST(CpuThreadPool, AnExceptionReachesTheCallerAfterEveryRangeFinished) {
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> covered{0};
  EXPECT_THROW(pool.parallelFor(1000, 10,
                                [&](int64_t begin, int64_t end) {
                                  covered += end - begin;
                                  if (begin == 0) throw std::runtime_error("range 0 failed");
                                }),
               std::runtime_error);
  EXPECT_EQ(covered.load(), 1000);
  std::atomic<int64_t> again{0};
  pool.parallelFor(1000, 10, [&](int64_t begin, int64_t end) { again += end - begin; });  // still usable
  EXPECT_EQ(again.load(), 1000);
}

TEST(CpuBufferPool, ReusesReleasedStorageAndOutlivesThePool) {
  Tensor survivor;
  {
    cpu::BufferPool pool;
    { Tensor a = pool.allocate(DataType::FLOAT, {256, 256}); }
    Tensor b = pool.allocate(DataType::FLOAT, {256, 256});
    EXPECT_EQ(pool.stats().allocated, 1);
    EXPECT_EQ(pool.stats().reused, 1);
    Tensor c = pool.allocate(DataType::FLOAT, {1024, 1024});  // nothing pooled that large
    EXPECT_EQ(pool.stats().allocated, 2);
    survivor = b;
    EXPECT_EQ(pool.allocate(DataType::STRING, {2}).strings()[1], "");
  }
  survivor.data<float>()[0] = 1.f;  // storage is still valid, and returns safely once the pool is gone
}

// A decoder's key/value cache grows by one position per step and the previous step's cache is released after the
// new one is allocated: with exact-size buffers every step missed the pool (each request a little larger than any
// released buffer) and took fresh memory; size classes let the steps reuse what earlier steps released.
TEST(CpuBufferPool, AGrowingCacheReusesEarlierStepsBuffers) {
  cpu::BufferPool pool;
  constexpr int64_t kSteps = 100;
  Tensor previous = pool.allocate(DataType::FLOAT, {1, 8, 40, 64});
  for (int64_t length = 41; length < 41 + kSteps; ++length) {
    Tensor present = pool.allocate(DataType::FLOAT, {1, 8, length, 64});  // 80-360 KiB
    previous = present;
  }
  EXPECT_LE(pool.stats().allocated, kSteps / 4);  // exact sizes took kSteps + 1
  EXPECT_GE(pool.stats().reused, kSteps * 3 / 4);
}

// Conv -> Mul(scale) -> Add(per-channel shift) -> HardSwish as Add/Clip/Mul/Div -> Add(residual input) -> Relu.
ModelBuilder convChainModel(bool exposeInner) {
  ModelBuilder m(13);
  m.input("X", {1, 3, 9, 9});
  m.input("R", {1, 4, 9, 9});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i));
  m.initializer("W", {4, 3, 3, 3}, w);
  m.initializer("B", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  m.initializer("scale", {1}, {1.3f});
  m.initializer("shift", {1, 4, 1, 1}, {0.5f, -0.5f, 1.5f, -1.5f});
  m.initializer("three", {}, {3.f});
  m.initializer("zero", {}, {0.f});
  m.initializer("six", {}, {6.f});
  auto& conv = m.node("Conv", {"X", "W", "B"}, {"c"});
  testing::attrInts(conv, "pads", {1, 1, 1, 1});
  m.node("Mul", {"scale", "c"}, {"m"});
  m.node("Add", {"m", "shift"}, {"a"});
  m.node("Add", {"a", "three"}, {"t"});
  m.node("Clip", {"t", "zero", "six"}, {"cl"});
  m.node("Mul", {"a", "cl"}, {"h"});
  m.node("Div", {"h", "six"}, {"d"});
  m.node("Add", {"d", "R"}, {"s"});
  m.node("Relu", {"s"}, {"Y"});
  m.output("Y");
  if (exposeInner) m.output("t");  // a graph output inside the chain stops the fusion there
  return m;
}

struct ChainRun {
  std::vector<float> y;
  size_t fused = 0;
};

ChainRun runChain(bool exposeInner, int threads) {
  auto model = onnx_io::modelFromProto(convChainModel(exposeInner).build());
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  cpu::ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.intraOpThreads = threads;
  auto executor = cpu::GraphExecutor::create(model->graph, config);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  std::vector<float> x(3 * 81), r(4 * 81);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * static_cast<float>(i)) * 3.f;
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::sin(0.05f * static_cast<float>(i));
  const std::vector<Tensor> inputs{Tensor::fromVector<float>({1, 3, 9, 9}, x), Tensor::fromVector<float>({1, 4, 9, 9}, r)};
  ChainRun result;
  for (int run = 0; run < 3; ++run) {  // repeated runs reuse pooled storage; results must not change
    auto outputs = (*executor)->run(inputs);
    EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
    const float* y = (*outputs)[0].data<float>();
    std::vector<float> values(y, y + (*outputs)[0].numel());
    if (run > 0) {
      EXPECT_EQ(values, result.y);
    }
    result.y = std::move(values);
  }
  const auto stats = (*executor)->bufferStats();
  EXPECT_GT(stats.reused, 0);
  result.fused = (*executor)->fusedNodeCount();
  return result;
}

TEST(CpuFusion, ConvChainMatchesUnfusedNodesBitForBit) {
  const ChainRun fused = runChain(false, 1);
  const ChainRun partial = runChain(true, 1);
  const ChainRun threaded = runChain(false, 2);
  EXPECT_EQ(fused.fused, 8u);                  // every node after the Conv
  EXPECT_LT(partial.fused, fused.fused);       // stops before the exposed value
  ASSERT_EQ(fused.y.size(), 4u * 81u);
  EXPECT_EQ(fused.y, partial.y);
  EXPECT_EQ(fused.y, threaded.y);
  // And the values are right: recompute output channel 2 at (4, 4) in double.
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i));
  double c = 0.3;
  for (int ci = 0; ci < 3; ++ci) {
    for (int kh = 0; kh < 3; ++kh) {
      for (int kw = 0; kw < 3; ++kw) {
        c += w[static_cast<size_t>(((2 * 3 + ci) * 3 + kh) * 3 + kw)] *
             std::cos(0.11f * static_cast<float>(ci * 81 + (3 + kh) * 9 + 3 + kw)) * 3.0;
      }
    }
  }
  const double a = 1.3 * c + 1.5;
  const double h = a * std::clamp(a + 3.0, 0.0, 6.0) / 6.0;
  const double y = std::max(0.0, h + std::sin(0.05 * (2 * 81 + 4 * 9 + 4)));
  EXPECT_NEAR(fused.y[2 * 81 + 4 * 9 + 4], y, 1e-3);
}

// Gemm (transB) and a batched MatMul big enough to be split over threads: both split directions against a
// double-precision reference.
TEST(CpuParallelGemm, SplitProductsMatchAReference) {
  const int64_t M = 72, K = 96, N = 80, batch = 3;
  ModelBuilder m(13);
  m.input("A", {M, K});
  m.input("X", {batch, 4, K});
  std::vector<float> b(static_cast<size_t>(N * K)), c(static_cast<size_t>(N));
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.013f * static_cast<float>(i));
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.01f * static_cast<float>(i);
  m.initializer("B", {N, K}, b);
  m.initializer("C", {N}, c);
  std::vector<float> w(static_cast<size_t>(K * 4096));
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.007f * static_cast<float>(i));
  m.initializer("W", {K, 4096}, w);
  auto& gemmNode = m.node("Gemm", {"A", "B", "C"}, {"Y"});
  testing::attrInt(gemmNode, "transB", 1);
  m.node("MatMul", {"X", "W"}, {"Z"});  // 12 rows, 4096 columns: split by columns
  m.output("Y");
  m.output("Z");
  auto model = onnx_io::modelFromProto(m.build());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  cpu::ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.intraOpThreads = 2;
  auto executor = cpu::GraphExecutor::create(model->graph, config);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  std::vector<float> a(static_cast<size_t>(M * K)), x(static_cast<size_t>(batch * 4 * K));
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::cos(0.021f * static_cast<float>(i));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.017f * static_cast<float>(i));
  auto outputs = (*executor)->run(std::vector<Tensor>{Tensor::fromVector<float>({M, K}, a),
                                                      Tensor::fromVector<float>({batch, 4, K}, x)});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  const float* y = (*outputs)[0].data<float>();
  for (int64_t i = 0; i < M; i += 7) {
    for (int64_t j = 0; j < N; j += 5) {
      double ref = c[static_cast<size_t>(j)];
      for (int64_t k = 0; k < K; ++k) ref += double(a[static_cast<size_t>(i * K + k)]) * b[static_cast<size_t>(j * K + k)];
      ASSERT_NEAR(y[i * N + j], ref, 1e-3) << i << "," << j;
    }
  }
  const float* z = (*outputs)[1].data<float>();
  ASSERT_EQ((*outputs)[1].shape(), (Shape{batch, 4, 4096}));
  for (int64_t r = 0; r < batch * 4; r += 5) {
    for (int64_t j = 0; j < 4096; j += 331) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += double(x[static_cast<size_t>(r * K + k)]) * w[static_cast<size_t>(k * 4096 + j)];
      ASSERT_NEAR(z[r * 4096 + j], ref, 1e-3) << r << "," << j;
    }
  }
}

// A float16 Conv whose weights are an initializer (converted to float once, when the kernel is built) gives what
// the same Conv gives with the weights fed as an input (converted on every run).
TEST(CpuPrepackedWeights, HalfConvWithConstantWeightsMatchesFedWeights) {
  auto half = [](const std::vector<float>& values, const Shape& shape) {
    Tensor t(DataType::FLOAT16, shape);
    for (size_t i = 0; i < values.size(); ++i) t.data<Float16>()[i] = Float16(values[i]);
    return t;
  };
  std::vector<float> w(4 * 3 * 3 * 3), x(3 * 49);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.2f * static_cast<float>(i));
  auto runConv = [&](bool constantWeights) {
    ModelBuilder m(13);
    m.input("X", {1, 3, 7, 7}, onnx::TensorProto::FLOAT16);
    if (!constantWeights) m.input("W", {4, 3, 3, 3}, onnx::TensorProto::FLOAT16);
    m.node("Conv", {"X", "W"}, {"Y"});
    m.output("Y", {}, onnx::TensorProto::FLOAT16);
    onnx::ModelProto proto = m.build();
    if (constantWeights) {
      onnx::TensorProto* init = proto.mutable_graph()->add_initializer();
      init->set_name("W");
      init->set_data_type(onnx::TensorProto::FLOAT16);
      for (int64_t d : {4, 3, 3, 3}) init->add_dims(d);
      for (float v : w) init->add_int32_data(Float16(v).bits);
    }
    auto model = onnx_io::modelFromProto(proto);
    EXPECT_TRUE(model.isOk()) << model.status().toString();
    cpu::ExecutorConfig config;
    config.opsets = model->opsetImports;
    auto executor = cpu::GraphExecutor::create(model->graph, config);
    EXPECT_TRUE(executor.isOk()) << executor.status().toString();
    std::vector<Tensor> inputs{half(x, {1, 3, 7, 7})};
    if (!constantWeights) inputs.push_back(half(w, {4, 3, 3, 3}));
    auto outputs = (*executor)->run(inputs);
    EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
    const Tensor& y = (*outputs)[0];
    std::vector<uint16_t> bits;
    for (int64_t i = 0; i < y.numel(); ++i) bits.push_back(y.data<Float16>()[i].bits);
    return bits;
  };
  const auto fed = runConv(false), constant = runConv(true);
  ASSERT_EQ(fed.size(), 4u * 25u);
  EXPECT_EQ(fed, constant);
}

}  // namespace
}  // namespace kiln
