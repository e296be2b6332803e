// IoBinding and device tensors: a run's outputs bound to the device stay in the Vulkan EP's memory and come back as
// inputs without a copy (a growing cache fed back step after step, as a decoder's KV cache), measured by
// Session::transfers(); host bindings on the CPU EP; device tensors read by CPU nodes and by another session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gtest_requirements.h"
#include "kiln/io_binding.h"
#include "kiln/session.h"
#include "model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

// present = Concat(past, 2 * x) along axis 2 (a cache one row longer per step); y = Relu(x) + 1.
// past [1, 2, T, 4], x [1, 2, 1, 4].
std::string cacheModel(bool withCpuReader = false) {
  ModelBuilder m(17);
  m.input("past", {1, 2, -1, 4});
  m.input("x", {1, 2, 1, 4});
  m.initializer("two", {1}, {2});
  m.initializer("one", {1}, {1});
  m.node("Mul", {"x", "two"}, {"x2"});
  testing::attrInt(m.node("Concat", {"past", "x2"}, {"present"}), "axis", 2);
  m.node("Relu", {"x"}, {"r"});
  m.node("Add", {"r", "one"}, {"y"});
  m.output("present", {1, 2, -1, 4});
  m.output("y", {1, 2, 1, 4});
  if (withCpuReader) {  // ReverseSequence has no Vulkan kernel: a CPU node reading the device-bound output
    onnx::TensorProto lens;
    lens.set_name("lens");
    lens.set_data_type(onnx::TensorProto::INT64);
    lens.add_dims(1);
    lens.add_int64_data(2);
    *m.proto().add_initializer() = lens;
    auto& reverse = m.node("ReverseSequence", {"present", "lens"}, {"top"});  // the two heads swapped
    testing::attrInt(reverse, "batch_axis", 0);
    testing::attrInt(reverse, "time_axis", 1);
    m.output("top", {1, 2, -1, 4});
  }
  std::string bytes;
  m.build().SerializeToString(&bytes);
  return bytes;
}

std::unique_ptr<Session> create(const std::string& model, const std::string& providers) {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", providers).isOk());
  auto session = Session::create(std::span(reinterpret_cast<const std::byte*>(model.data()), model.size()), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

Tensor stepInput(int step) {
  std::vector<float> values(8);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(float(step * 8 + int(i))) * 3.0f;
  return Tensor::fromVector<float>({1, 2, 1, 4}, values);
}

std::vector<float> hostValues(const Tensor& tensor) {
  auto host = tensor.toHost();
  EXPECT_TRUE(host.isOk()) << host.status().toString();
  if (!host.isOk()) return {};
  return std::vector<float>(host->data<float>(), host->data<float>() + host->numel());
}

// The reference: the same steps through Session::run on the CPU EP.
std::vector<std::vector<float>> referenceSteps(int steps) {
  auto session = create(cacheModel(), "cpu");
  std::vector<std::vector<float>> presents;
  Tensor past(DataType::FLOAT, {1, 2, 0, 4});
  for (int s = 0; s < steps; ++s) {
    auto out = session->run({{"past", past}, {"x", stepInput(s)}});
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    past = (*out)[0].tensor;
    presents.push_back(hostValues(past));
  }
  return presents;
}

TEST(IoBinding, CpuSessionBindsHostValuesAndReturnsTheBoundOutputsInOrder) {
  auto session = create(cacheModel(), "cpu");
  ASSERT_TRUE(session);
  IoBinding binding;
  binding.bindInput("past", Tensor(DataType::FLOAT, {1, 2, 0, 4}));
  binding.bindInput("x", Tensor(DataType::FLOAT, {1, 2, 1, 4}));
  binding.bindInput("x", stepInput(0));  // rebinding replaces
  ASSERT_EQ(binding.inputs().size(), 2u);
  binding.bindOutput("y", OutputPlace::HOST);
  binding.bindOutput("present");  // DEVICE: where the CPU EP computed it, host memory
  ASSERT_TRUE(session->runWithBinding(binding).isOk());
  ASSERT_EQ(binding.outputs().size(), 2u);
  EXPECT_EQ(binding.outputs()[0].name, "y");
  EXPECT_EQ(binding.outputs()[1].name, "present");
  EXPECT_EQ(binding.outputs()[1].tensor.location(), "cpu");
  const std::vector<float> x = hostValues(stepInput(0));
  const std::vector<float> y = hostValues(binding.outputs()[0].tensor);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.f) + 1.f);
  EXPECT_EQ(session->transfers().hostToDeviceBytes, 0u);
  EXPECT_EQ(session->transfers().deviceToHostBytes, 0u);

  binding.clearBoundOutputs();  // none bound: every output, in declaration order, in host memory
  ASSERT_TRUE(session->runWithBinding(binding).isOk());
  ASSERT_EQ(binding.outputs().size(), 2u);
  EXPECT_EQ(binding.outputs()[0].name, "present");
}

TEST(IoBinding, RefusesUnknownNamesAndMissingInputsKeepingTheLastOutputs) {
  auto session = create(cacheModel(), "cpu");
  ASSERT_TRUE(session);
  IoBinding binding;
  binding.bindInput("x", stepInput(0));
  Status missing = session->runWithBinding(binding);
  EXPECT_EQ(missing.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(missing.message().find("past"), std::string::npos) << missing.message();
  binding.bindInput("past", Tensor(DataType::FLOAT, {1, 2, 0, 4}));
  ASSERT_TRUE(session->runWithBinding(binding).isOk());
  binding.bindOutput("no_such_output");
  Status unknown = session->runWithBinding(binding);
  EXPECT_EQ(unknown.code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknown.message().find("no_such_output"), std::string::npos) << unknown.message();
  EXPECT_EQ(binding.outputs().size(), 2u);  // the failed runs left the last outputs alone
  binding.clearBoundOutputs();
  binding.bindInput("nope", stepInput(0));
  EXPECT_EQ(session->runWithBinding(binding).code(), StatusCode::INVALID_ARGUMENT);
}

TEST(IoBinding, VulkanCacheStaysOnTheDeviceAcrossSteps) {
  REQUIRE_VULKAN();
  constexpr int kSteps = 6;
  const auto reference = referenceSteps(kSteps);
  auto session = create(cacheModel(), "vulkan,cpu");
  ASSERT_TRUE(session);
  ASSERT_EQ(session->partitions().size(), 1u);
  IoBinding binding;
  binding.bindOutput("present", OutputPlace::DEVICE);
  binding.bindOutput("y", OutputPlace::HOST);
  binding.bindInput("past", Tensor(DataType::FLOAT, {1, 2, 0, 4}));
  const uint64_t xBytes = stepInput(0).byteSize(), yBytes = xBytes;
  for (int s = 0; s < kSteps; ++s) {
    const TransferCounters before = session->transfers();
    binding.bindInput("x", stepInput(s));
    ASSERT_TRUE(session->runWithBinding(binding).isOk()) << "step " << s;
    const TransferCounters after = session->transfers();
    const Tensor& present = binding.outputs()[0].tensor;
    ASSERT_TRUE(present.isOnDevice()) << "step " << s;
    EXPECT_EQ(present.rawData(), nullptr);
    EXPECT_EQ(present.location().rfind("VulkanExecutionProvider:", 0), 0u) << present.location();
    EXPECT_EQ(present.shape(), (Shape{1, 2, s + 1, 4}));
    EXPECT_FALSE(binding.outputs()[1].tensor.isOnDevice());
    // Only x goes up and only y comes back: the cache (s * 32 bytes in, (s + 1) * 32 out) never crosses.
    EXPECT_EQ(after.hostToDeviceBytes - before.hostToDeviceBytes, xBytes) << "step " << s;
    EXPECT_EQ(after.deviceToHostBytes - before.deviceToHostBytes, yBytes) << "step " << s;
    EXPECT_EQ(hostValues(present), reference[size_t(s)]) << "step " << s;
    binding.bindInput("past", present);
  }

  // The same steps through Session::run copy the cache both ways: the counters see it.
  const TransferCounters before = session->transfers();
  auto out = session->run({{"past", Tensor::fromVector<float>({1, 2, 3, 4}, reference[2])}, {"x", stepInput(3)}});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  const TransferCounters after = session->transfers();
  EXPECT_EQ(after.hostToDeviceBytes - before.hostToDeviceBytes, 3 * xBytes + xBytes);
  EXPECT_EQ(after.deviceToHostBytes - before.deviceToHostBytes, 4 * xBytes + yBytes);
  EXPECT_EQ(hostValues((*out)[0].tensor), reference[3]);
}

TEST(IoBinding, DeviceTensorsReadByCpuNodesPlainRunsAndOtherSessions) {
  REQUIRE_VULKAN();
  auto producer = create(cacheModel(), "vulkan,cpu");
  ASSERT_TRUE(producer);
  IoBinding binding;
  binding.bindInput("past", Tensor(DataType::FLOAT, {1, 2, 0, 4}));
  binding.bindInput("x", stepInput(0));
  binding.bindOutput("present");
  ASSERT_TRUE(producer->runWithBinding(binding).isOk());
  const Tensor present = binding.outputs()[0].tensor;
  ASSERT_TRUE(present.isOnDevice());
  const std::vector<float> expected = referenceSteps(2)[1];

  // Tensor API over device memory: clone() and toHost() read back, reshaped() stays on the device.
  EXPECT_FALSE(present.clone().isOnDevice());
  EXPECT_EQ(hostValues(present.clone()), hostValues(present));
  EXPECT_TRUE(present.reshaped({8}).isOnDevice());
  EXPECT_TRUE(present.reshaped({8}).sharesStorageWith(present));

  // A plain run() takes the device tensor, and returns host tensors only.
  auto plain = producer->run({{"past", present}, {"x", stepInput(1)}});
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
  EXPECT_FALSE((*plain)[0].tensor.isOnDevice());
  EXPECT_EQ(hostValues((*plain)[0].tensor), expected);

  // A CPU-EP session reads it back (counted on its side).
  auto cpu = create(cacheModel(), "cpu");
  ASSERT_TRUE(cpu);
  auto onCpu = cpu->run({{"past", present}, {"x", stepInput(1)}});
  ASSERT_TRUE(onCpu.isOk()) << onCpu.status().toString();
  EXPECT_EQ(hostValues((*onCpu)[0].tensor), expected);
  EXPECT_EQ(cpu->transfers().deviceToHostBytes, present.byteSize());

  // A device-bound output that a CPU node (ReverseSequence) also reads: read back for it, still returned on the device.
  auto mixed = create(cacheModel(true), "vulkan,cpu");
  ASSERT_TRUE(mixed);
  IoBinding both;
  both.bindInput("past", present);
  both.bindInput("x", stepInput(1));
  both.bindOutput("present");
  both.bindOutput("top", OutputPlace::HOST);
  ASSERT_TRUE(mixed->runWithBinding(both).isOk());
  EXPECT_TRUE(both.outputs()[0].tensor.isOnDevice());
  EXPECT_EQ(hostValues(both.outputs()[0].tensor), expected);
  const std::vector<float> top = hostValues(both.outputs()[1].tensor);
  ASSERT_EQ(top.size(), expected.size());
  for (size_t h = 0; h < 2; ++h) {
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(top[h * 8 + i], expected[(1 - h) * 8 + i]) << h << "," << i;
  }
}

}  // namespace
}  // namespace kiln
