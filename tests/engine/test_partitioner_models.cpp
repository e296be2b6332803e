// The partitioner on the real models (skipped without the model cache, see tests/models): a fake EP takes a
// mixed set of op types, so partitions form at every depth of Silero VAD's nested If branches and across
// PP-OCRv4 det; the results must equal the CPU EP's exactly (the fake EP computes with the CPU kernels).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "fake_execution_provider.h"
#include "gtest_requirements.h"
#include "kiln/session.h"
#include "session/inference_session.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

using testing::modelCache;

Tensor randomFloats(Shape shape, unsigned seed) {
  Tensor t(DataType::FLOAT, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
  return t;
}

void expectMixedEqualsCpu(const fs::path& model, const std::set<std::string>& fakeOps,
                          const std::vector<NamedTensor>& inputs) {
  REQUIRE_MODEL_FILE(model);
  std::vector<std::unique_ptr<ExecutionProvider>> providers;
  auto fake = std::make_unique<testing::FakeExecutionProvider>(fakeOps);
  testing::FakeExecutionProvider* fakeEp = fake.get();
  providers.push_back(std::move(fake));
  providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
  auto mixed = createSessionWithProviders(model.string(), {}, std::move(providers));
  ASSERT_TRUE(mixed.isOk()) << mixed.status().toString();
  EXPECT_GT(fakeEp->compiles, 1);
  SessionOptions cpuOnly;
  ASSERT_TRUE(cpuOnly.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto reference = Session::create(model.string(), cpuOnly);
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();

  auto actual = (*mixed)->run(inputs);
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  auto expected = (*reference)->run(inputs);
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& a = (*actual)[i].tensor;
    const Tensor& e = (*expected)[i].tensor;
    ASSERT_EQ(a.shape(), e.shape()) << (*actual)[i].name;
    ASSERT_EQ(a.byteSize(), e.byteSize());
    EXPECT_EQ(std::memcmp(a.rawData(), e.rawData(), a.byteSize()), 0) << (*actual)[i].name;
  }
}

TEST(PartitionerOnRealModels, SileroVadMixedInsideIfBranches) {
  expectMixedEqualsCpu(modelCache() / "silero_vad_v5.onnx",
                       {"Conv", "Relu", "Sigmoid", "LSTM", "Concat", "Slice", "Pow", "Sqrt", "Pad", "Mul"},
                       {{"input", randomFloats({1, 512}, 1)},
                        {"state", Tensor(DataType::FLOAT, {2, 1, 128})},
                        {"sr", Tensor::fromVector<int64_t>({}, {16000})}});
}

TEST(PartitionerOnRealModels, PpOcrDetMixed) {
  expectMixedEqualsCpu(modelCache() / "ch_PP-OCRv4_det_infer.onnx",
                       {"Conv", "Relu", "HardSigmoid", "Add", "Resize", "BatchNormalization", "ConvTranspose"},
                       {{"x", randomFloats({1, 3, 64, 64}, 2)}});
}

}  // namespace
}  // namespace kiln
