// kiln/compare.h: tensor metrics, model comparison, bisect and the one-node reproducer (CPU EP only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "kiln/compare.h"
#include "kiln/tensor_io.h"
#include "model_builder.h"
#include "test_models.h"

namespace kiln {
namespace {

Tensor floats(const std::vector<float>& values, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return Tensor::fromVector<float>(shape, values);
}

TEST(CompareTensors, FillsEveryMetric) {
  const auto c = compareTensors("y", floats({1, 2, 3, 4.5f}, {2, 2}), floats({1, 2, 3, 4}, {2, 2}));
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.elements, 4);
  EXPECT_EQ(c.beyondTolerance, 1);
  EXPECT_DOUBLE_EQ(c.fractionBeyondTolerance, 0.25);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 0.5);
  EXPECT_DOUBLE_EQ(c.maxRelError, 0.125);
  EXPECT_DOUBLE_EQ(c.meanAbsError, 0.125);
  const double dot = 1 + 4 + 9 + 18, norms = std::sqrt(1 + 4 + 9 + 20.25) * std::sqrt(1 + 4 + 9 + 16);
  EXPECT_NEAR(c.cosineSimilarity, dot / norms, 1e-12);
  EXPECT_EQ(c.worst.flatIndex, 3);
  EXPECT_EQ(c.worst.index, (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(c.worst.value, 4.5);
  EXPECT_DOUBLE_EQ(c.worst.reference, 4);
}

TEST(CompareTensors, ErrorHistogramCountsFinitePairsInDecades) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Errors 0, 0.5 (bin 10: [0.1, 1)), 2 (bin 11: [1, 10)), 1000 (last bin), and a NaN mismatch (not counted).
  const auto c = compareTensors("y", floats({1, 2.5f, 5, 1000, nan}), floats({1, 2, 3, 0, 1}));
  ASSERT_EQ(c.errorHistogram.size(), static_cast<size_t>(kErrorHistogramBins));
  std::vector<int64_t> expected(kErrorHistogramBins, 0);
  expected[0] = 1;
  expected[10] = 1;
  expected[11] = 1;
  expected[kErrorHistogramBins - 1] = 1;
  EXPECT_EQ(c.errorHistogram, expected);
  EXPECT_EQ(errorHistogramBin(1e-11), 0);
  EXPECT_EQ(errorHistogramBin(1e-10), 1);
  EXPECT_EQ(errorHistogramBin(0.5), 10);
  EXPECT_DOUBLE_EQ(errorHistogramLowerEdge(0), 0);
  EXPECT_DOUBLE_EQ(errorHistogramLowerEdge(11), 1);
  // Nothing compared (a shape mismatch): no histogram.
  EXPECT_TRUE(compareTensors("y", floats({1, 2}), floats({1, 2, 3})).errorHistogram.empty());
}

TEST(CompareTensors, ExactlyAtTheBoundPasses) {
  // |x - ref| == atol + rtol * |ref| with values exact in binary: 0.5 + 0.25 * 2 = 1.
  const Tolerance tolerance{0.5, 0.25};
  EXPECT_TRUE(compareTensors("y", Tensor::fromVector<double>({1}, {3.0}), Tensor::fromVector<double>({1}, {2.0}),
                             tolerance).passed());
  EXPECT_FALSE(compareTensors("y", Tensor::fromVector<double>({1}, {3.0000001}), Tensor::fromVector<double>({1}, {2.0}),
                              tolerance).passed());
  // Zero tolerance: only identical values pass.
  EXPECT_TRUE(compareTensors("y", floats({1, 2}), floats({1, 2}), {0, 0}).passed());
  EXPECT_FALSE(compareTensors("y", floats({1, 2}), floats({1, std::nextafter(2.f, 3.f)}), {0, 0}).passed());
}

TEST(CompareTensors, NanAndInfinityRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto same = compareTensors("y", floats({nan, inf, -inf, 1}), floats({nan, inf, -inf, 1}));
  EXPECT_TRUE(same.passed());
  EXPECT_EQ(same.nanMismatches, 0);
  EXPECT_EQ(same.infMismatches, 0);
  auto differ = compareTensors("y", floats({nan, 1, inf, 1}), floats({1, nan, -inf, inf}));
  EXPECT_FALSE(differ.passed());
  EXPECT_EQ(differ.nanMismatches, 2);
  EXPECT_EQ(differ.infMismatches, 2);
  EXPECT_EQ(differ.beyondTolerance, 4);
  EXPECT_EQ(differ.worst.flatIndex, 0);  // the first mismatch
}

TEST(CompareTensors, ShapeAndDtypeMismatches) {
  auto shape = compareTensors("y", floats({1, 2}, {1, 2}), floats({1, 2}, {2, 1}));
  EXPECT_TRUE(shape.shapeMismatch);
  EXPECT_FALSE(shape.passed());
  EXPECT_EQ(shape.elements, 0);
  // float16 against float: flagged, values still compared.
  std::vector<Float16> halves = {Float16(1.f), Float16(2.5f)};
  auto dtype = compareTensors("y", Tensor::fromVector<Float16>({2}, halves), floats({1, 2.5f}));
  EXPECT_TRUE(dtype.dtypeMismatch);
  EXPECT_FALSE(dtype.passed());
  EXPECT_EQ(dtype.beyondTolerance, 0);
  EXPECT_EQ(dtype.dtype, DataType::FLOAT16);
  EXPECT_EQ(dtype.referenceDtype, DataType::FLOAT);
  auto missing = compareTensors("y", Tensor(), floats({1}));
  EXPECT_TRUE(missing.missing);
  EXPECT_FALSE(missing.passed());
  auto strings = compareTensors("s", Tensor::fromStrings({1}, {"a"}), Tensor::fromStrings({1}, {"a"}));
  EXPECT_TRUE(strings.unsupportedDtype);
}

// 1000 elements equal to their reference but for `beyond` of them, each off by 1 (far beyond the default tolerance).
Tensor withBeyond(const std::vector<float>& reference, int beyond) {
  std::vector<float> values = reference;
  for (int k = 0; k < beyond; ++k) values[static_cast<size_t>(k) * 7] += 1;
  return floats(values);
}

TEST(CompareTensors, MaxFractionBeyondAllowsThatFractionOfElements) {
  const std::vector<float> reference(1000, 0.5f);
  const Tensor one = withBeyond(reference, 1);
  const auto strict = compareTensors("y", one, floats(reference));
  EXPECT_FALSE(strict.passed());  // the default: every element must pass
  EXPECT_EQ(strict.beyondTolerance, 1);
  EXPECT_EQ(strict.allowedBeyond, 0);
  const auto allowed = compareTensors("y", one, floats(reference), {1e-4, 1e-3, 0.001});
  EXPECT_TRUE(allowed.passed());
  EXPECT_EQ(allowed.allowedBeyond, 1);
  EXPECT_EQ(allowed.beyondTolerance, 1);  // the metrics do not change, only the verdict
  const auto tooFew = compareTensors("y", one, floats(reference), {1e-4, 1e-3, 0.0009});
  EXPECT_FALSE(tooFew.passed());
  EXPECT_EQ(tooFew.allowedBeyond, 0);
  EXPECT_FALSE(compareTensors("y", withBeyond(reference, 21), floats(reference), {1e-4, 1e-3, 0.02}).passed());
  EXPECT_TRUE(compareTensors("y", withBeyond(reference, 20), floats(reference), {1e-4, 1e-3, 0.02}).passed());
  // A decimal fraction that is exactly k / elements allows k, whatever its binary rounding (0.29 * 100 < 29).
  EXPECT_EQ(allowedBeyondTolerance({0, 0, 0.29}, 100), 29);
  EXPECT_EQ(allowedBeyondTolerance({0, 0, 0.02}, 409600), 8192);
  EXPECT_EQ(allowedBeyondTolerance({0, 0, std::numeric_limits<double>::quiet_NaN()}, 100), 0);
  EXPECT_EQ(allowedBeyondTolerance({0, 0, -0.5}, 100), 0);
  EXPECT_EQ(allowedBeyondTolerance({0, 0, 0.5}, 0), 0);
}

TEST(CompareTensors, MaxFractionBeyondNeverExcusesNanInfOrMismatches) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> reference(1000, 0.5f), values = reference;
  values[3] = nan;
  const Tolerance generous{1e-4, 1e-3, 0.5};
  const auto nanMismatch = compareTensors("y", floats(values), floats(reference), generous);
  EXPECT_EQ(nanMismatch.beyondTolerance, 1);
  EXPECT_GE(nanMismatch.allowedBeyond, 1);
  EXPECT_FALSE(nanMismatch.passed());
  values[3] = inf;
  EXPECT_FALSE(compareTensors("y", floats(values), floats(reference), generous).passed());
  // NaN against NaN is still equal.
  values[3] = reference[3] = nan;
  EXPECT_TRUE(compareTensors("y", floats(values), floats(reference), generous).passed());
  EXPECT_FALSE(compareTensors("y", floats({1, 2}, {1, 2}), floats({1, 2}, {2, 1}), generous).passed());
  std::vector<Float16> halves = {Float16(1.f), Float16(2.f)};
  EXPECT_FALSE(compareTensors("y", Tensor::fromVector<Float16>({2}, halves), floats({1, 2}), generous).passed());
  EXPECT_FALSE(compareTensors("y", Tensor(), floats({1}), generous).passed());
}

TEST(CompareTensors, IntegerAndBoolTypes) {
  EXPECT_TRUE(compareTensors("i", Tensor::fromVector<int8_t>({2}, {-3, 4}), Tensor::fromVector<int8_t>({2}, {-3, 4}))
                  .passed());
  auto u8 = compareTensors("u", Tensor::fromVector<uint8_t>({2}, {200, 4}), Tensor::fromVector<uint8_t>({2}, {201, 4}));
  EXPECT_DOUBLE_EQ(u8.maxAbsError, 1);
  EXPECT_EQ(u8.beyondTolerance, 1);
  auto i64 = compareTensors("l", Tensor::fromVector<int64_t>({1}, {1LL << 40}), Tensor::fromVector<int64_t>({1}, {1LL << 40}));
  EXPECT_TRUE(i64.passed());
  auto b = compareTensors("b", Tensor::fromVector<bool>({2}, {true, false}), Tensor::fromVector<bool>({2}, {true, true}));
  EXPECT_EQ(b.beyondTolerance, 1);
  EXPECT_EQ(b.worst.flatIndex, 1);
}

TEST(CompareTensors, CosineOfZeroTensors) {
  EXPECT_DOUBLE_EQ(compareTensors("z", floats({0, 0}), floats({0, 0})).cosineSimilarity, 1);
  EXPECT_DOUBLE_EQ(compareTensors("z", floats({0, 0}), floats({1, 0})).cosineSimilarity, 0);
}

// x -> Add(w1) -> a -> Relu -> b -> Mul(w2) -> y; `scale` is w2's value, so two models can differ in one weight.
std::string chainModel(const std::string& path, float scale) {
  testing::ModelBuilder m;
  m.input("x", {1, 4}).output("y", {1, 4});
  m.initializer("w1", {1, 4}, {0.5f, -0.5f, 1, -1});
  m.initializer("w2", {1, 4}, {scale, scale, scale, scale});
  m.node("Add", {"x", "w1"}, {"a"}, "add");
  m.node("Relu", {"a"}, {"b"}, "relu");
  m.node("Mul", {"b", "w2"}, {"y"}, "mul");
  return m.save(path);
}

CompareSide cpuSide(const std::string& model) {
  CompareSide side;
  side.label = "cpu";
  side.modelPath = model;
  EXPECT_TRUE(side.options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  return side;
}

TEST(CompareModels, SameModelPassesAndAChangedWeightIsFoundByBisect) {
  testing::TempDir dir;
  const std::string a = chainModel(dir.file("a.onnx"), 2), b = chainModel(dir.file("b.onnx"), 3);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})}};
  auto same = compareModels(cpuSide(a), cpuSide(a), inputs);
  ASSERT_TRUE(same.isOk()) << same.status().toString();
  ASSERT_EQ(same->outputs.size(), 1u);
  EXPECT_TRUE(same->passed());

  auto differ = compareModels(cpuSide(a), cpuSide(b), inputs);
  ASSERT_TRUE(differ.isOk()) << differ.status().toString();
  EXPECT_FALSE(differ->passed());

  BisectOptions options;
  options.maxValuesPerChunk = 1;  // one value per run: the chunking itself is exercised
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directories(tmp);
  const char* oldTmp = std::getenv("TMPDIR");
  const std::string savedTmp = oldTmp ? oldTmp : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  auto bisect = bisectModels(cpuSide(a), cpuSide(b), inputs, {}, options);
  // The exposed variants lived in a private folder under TMPDIR, removed afterwards.
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  if (oldTmp) setenv("TMPDIR", savedTmp.c_str(), 1); else unsetenv("TMPDIR");
  ASSERT_TRUE(bisect.isOk()) << bisect.status().toString();
  ASSERT_TRUE(bisect->firstDivergence.has_value());
  EXPECT_EQ(bisect->firstDivergence->node, "mul");
  EXPECT_EQ(bisect->firstDivergence->opType, "Mul");
  EXPECT_EQ(bisect->chunks, 3);
  ASSERT_EQ(bisect->firstDivergence->inputs.size(), 2u);
  EXPECT_TRUE(bisect->firstDivergence->inputs[0].passed());   // b, computed: agrees
  EXPECT_FALSE(bisect->firstDivergence->inputs[1].passed());  // w2, the changed weight
  ASSERT_EQ(bisect->firstDivergence->outputs.size(), 1u);
  EXPECT_FALSE(bisect->firstDivergence->outputs[0].passed());

  auto agree = bisectModels(cpuSide(a), cpuSide(a), inputs);
  ASSERT_TRUE(agree.isOk()) << agree.status().toString();
  EXPECT_FALSE(agree->firstDivergence.has_value());
  EXPECT_EQ(agree->valuesCompared, 3);
  ASSERT_EQ(agree->nodes.size(), 3u);
  EXPECT_EQ(agree->nodes[1].node, "relu");
  EXPECT_EQ(agree->nodes[1].opType, "Relu");
}

TEST(CompareModels, ReproducerHoldsTheNodeAndItsInputs) {
  testing::TempDir dir;
  const std::string a = chainModel(dir.file("a.onnx"), 2);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})}};
  auto written = writeReproducer(cpuSide(a), "mul", inputs, dir.file("repro"), "note line");
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  ASSERT_EQ(written->inputNames, (std::vector<std::string>{"b"}));
  auto b = readNpyFile(written->inputFiles[0]);
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(b->data<float>()[0], 1.5f);  // Relu(1 + 0.5)
  EXPECT_EQ(b->data<float>()[2], 0.f);   // Relu(-3 + 1)
  auto rerun = runSide(cpuSide(written->modelPath), {{"b", *b}});
  ASSERT_TRUE(rerun.isOk()) << rerun.status().toString();
  auto expected = readNpyFile(written->expectedOutputFiles[0]);
  ASSERT_TRUE(expected.isOk());
  EXPECT_TRUE(compareTensors("y", (*rerun)[0].tensor, *expected, {0, 0}).passed());
  // A folder that is not empty is refused; an unknown node too.
  EXPECT_EQ(writeReproducer(cpuSide(a), "mul", inputs, dir.file("repro")).status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(writeReproducer(cpuSide(a), "nope", inputs, dir.file("other")).status().code(),
            StatusCode::INVALID_ARGUMENT);
}

TEST(CompareModels, ExternalRunnerSide) {
  testing::TempDir dir;
  const std::string a = chainModel(dir.file("a.onnx"), 2);
  CompareSide external;
  external.label = "fake";
  external.modelPath = a;
  external.runner = [](const std::string&, const std::vector<NamedTensor>&) -> Result<std::vector<NamedTensor>> {
    return std::vector<NamedTensor>{{"y", floats({3, 3, 0, 6}, {1, 4})}};
  };
  auto c = compareModels(cpuSide(a), external, {{"x", floats({1, 2, -3, 4}, {1, 4})}});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_TRUE(c->passed());
}

TEST(CompareModels, MaxFractionBeyondReachesOutputsAndBisect) {
  testing::TempDir dir;
  // y = Relu(x + w1) * w2: with x = {1, 2, -3, 4} only the third element is 0 on both sides, the others differ.
  const std::string a = chainModel(dir.file("a.onnx"), 2), b = chainModel(dir.file("b.onnx"), 3);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})}};
  const Tolerance threeOfFour{1e-4, 1e-3, 0.75};
  auto outputs = compareModels(cpuSide(a), cpuSide(b), inputs, threeOfFour);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ(outputs->outputs[0].beyondTolerance, 3);
  EXPECT_TRUE(outputs->passed());
  EXPECT_FALSE(compareModels(cpuSide(a), cpuSide(b), inputs, {1e-4, 1e-3, 0.5})->passed());
  // Bisect judges intermediate values the same way: mul's output (3 of 4 beyond) passes at 0.75, diverges at 0.5.
  auto bisect = bisectModels(cpuSide(a), cpuSide(b), inputs, threeOfFour);
  ASSERT_TRUE(bisect.isOk()) << bisect.status().toString();
  EXPECT_FALSE(bisect->firstDivergence.has_value());
  auto strict = bisectModels(cpuSide(a), cpuSide(b), inputs, {1e-4, 1e-3, 0.5});
  ASSERT_TRUE(strict.isOk()) << strict.status().toString();
  ASSERT_TRUE(strict->firstDivergence.has_value());
  EXPECT_EQ(strict->firstDivergence->node, "mul");
}

// If(c): then x + 1 -> then_add -> * scale -> then_mul; else -Neg(x); then Relu. `scale` is in the then branch.
std::string ifModel(const std::string& path, float scale) {
  testing::GraphBuilder thenBranch("then");
  thenBranch.output("t2", {1, 4});
  thenBranch.initializer("one", {1}, {1});
  thenBranch.initializer("scale", {1}, {scale});
  thenBranch.node("Add", {"x", "one"}, {"t1"}, "then_add");
  thenBranch.node("Mul", {"t1", "scale"}, {"t2"}, "then_mul");
  testing::GraphBuilder elseBranch("else");
  elseBranch.output("e1", {1, 4});
  elseBranch.node("Neg", {"x"}, {"e1"}, "else_neg");
  testing::ModelBuilder m;
  m.input("x", {1, 4}).input("c", {}, onnx::TensorProto::BOOL).output("z", {1, 4});
  auto& branch = m.node("If", {"c"}, {"y"}, "branch");
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  m.node("Relu", {"y"}, {"z"}, "relu");
  return m.save(path);
}

TEST(CompareModels, BisectLooksInsideIfBodies) {
  testing::TempDir dir;
  const std::string a = ifModel(dir.file("a.onnx"), 2), b = ifModel(dir.file("b.onnx"), 3);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})},
                                           {"c", Tensor::fromVector<bool>({}, {true})}};
  BisectOptions options;
  options.maxValuesPerChunk = 1;
  auto bisect = bisectModels(cpuSide(a), cpuSide(b), inputs, {}, options);
  ASSERT_TRUE(bisect.isOk()) << bisect.status().toString();
  ASSERT_TRUE(bisect->firstDivergence.has_value());
  EXPECT_EQ(bisect->firstDivergence->node, "then_mul");
  EXPECT_EQ(bisect->nodesInSubgraphs, 0);
  ASSERT_GE(bisect->nodes.size(), 2u);
  EXPECT_EQ(bisect->nodes[0].node, "then_add");
  EXPECT_EQ(bisect->nodes[0].graph, "main/branch.then_branch");
  EXPECT_TRUE(bisect->nodes[0].passed());
  // The branch not taken yields nothing on either side: its values agree (both empty).
  auto agree = bisectModels(cpuSide(a), cpuSide(a), {inputs[0], {"c", Tensor::fromVector<bool>({}, {false})}});
  ASSERT_TRUE(agree.isOk()) << agree.status().toString();
  EXPECT_FALSE(agree->firstDivergence.has_value());
  // A reproducer of a body node is refused with a reason.
  EXPECT_EQ(writeReproducer(cpuSide(a), "then_mul", inputs, dir.file("repro")).status().code(),
            StatusCode::NOT_IMPLEMENTED);
}

// If(c) inside If(c): the inner then branch multiplies x by `scale` (inner_mul).
std::string nestedIfModel(const std::string& path, float scale) {
  testing::GraphBuilder innerThen("inner_then");
  innerThen.output("m1", {1, 4});
  innerThen.initializer("scale", {1}, {scale});
  innerThen.node("Mul", {"x", "scale"}, {"m1"}, "inner_mul");
  testing::GraphBuilder innerElse("inner_else");
  innerElse.output("m2", {1, 4});
  innerElse.node("Identity", {"x"}, {"m2"}, "inner_identity");
  testing::GraphBuilder outerThen("outer_then");
  outerThen.output("o1", {1, 4});
  auto& inner = outerThen.node("If", {"c"}, {"o1"}, "inner_if");
  testing::attrGraph(inner, "then_branch", innerThen.proto());
  testing::attrGraph(inner, "else_branch", innerElse.proto());
  testing::GraphBuilder outerElse("outer_else");
  outerElse.output("o2", {1, 4});
  outerElse.node("Neg", {"x"}, {"o2"}, "outer_neg");
  testing::ModelBuilder m;
  m.input("x", {1, 4}).input("c", {}, onnx::TensorProto::BOOL).output("z", {1, 4});
  auto& outer = m.node("If", {"c"}, {"y"}, "outer_if");
  testing::attrGraph(outer, "then_branch", outerThen.proto());
  testing::attrGraph(outer, "else_branch", outerElse.proto());
  m.node("Relu", {"y"}, {"z"}, "relu");
  return m.save(path);
}

TEST(CompareModels, BisectLooksInsideNestedBodies) {
  testing::TempDir dir;
  const std::string a = nestedIfModel(dir.file("a.onnx"), 2), b = nestedIfModel(dir.file("b.onnx"), 3);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})},
                                           {"c", Tensor::fromVector<bool>({}, {true})}};
  auto bisect = bisectModels(cpuSide(a), cpuSide(b), inputs);
  ASSERT_TRUE(bisect.isOk()) << bisect.status().toString();
  ASSERT_TRUE(bisect->firstDivergence.has_value());
  EXPECT_EQ(bisect->firstDivergence->node, "inner_mul");
  EXPECT_EQ(bisect->nodesInSubgraphs, 0);
  ASSERT_FALSE(bisect->nodes.empty());
  EXPECT_EQ(bisect->nodes[0].node, "inner_mul");
  EXPECT_EQ(bisect->nodes[0].graph, "main/outer_if.then_branch/inner_if.then_branch");
  ASSERT_EQ(bisect->nodes[0].outputs.size(), 1u);
  EXPECT_EQ(bisect->nodes[0].outputs[0].shape, (Shape{1, 4}));
  auto agree = bisectModels(cpuSide(a), cpuSide(a), inputs);
  ASSERT_TRUE(agree.isOk()) << agree.status().toString();
  EXPECT_FALSE(agree->firstDivergence.has_value());
  EXPECT_EQ(agree->valuesCompared, 6);  // m1, m2, o1, o2, y, z
}

// Loop 3 times: v += w (loop_add, in the body), then Relu. `w` is the body's weight.
std::string loopModel(const std::string& path, float w) {
  testing::GraphBuilder body("body");
  body.input("i", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("v_in", {1, 4});
  body.output("cond_out", {}, onnx::TensorProto::BOOL).output("v_out", {1, 4});
  body.initializer("w", {1}, {w});
  body.node("Identity", {"cond_in"}, {"cond_out"}, "loop_cond");
  body.node("Add", {"v_in", "w"}, {"v_out"}, "loop_add");
  testing::ModelBuilder m;
  m.input("x", {1, 4}).output("z", {1, 4});
  auto& trips = m.node("Constant", {}, {"trips"}, "trips");
  onnx::TensorProto three;
  three.set_data_type(onnx::TensorProto::INT64);
  three.add_int64_data(3);
  testing::attrTensor(trips, "value", three);
  auto& loop = m.node("Loop", {"trips", ""}, {"v"}, "loop");
  loop.add_input("x");
  testing::attrGraph(loop, "body", body.proto());
  m.node("Relu", {"v"}, {"z"}, "relu");
  return m.save(path);
}

TEST(CompareModels, BisectLooksInsideLoopBodies) {
  testing::TempDir dir;
  const std::string a = loopModel(dir.file("a.onnx"), 1), b = loopModel(dir.file("b.onnx"), 2);
  const std::vector<NamedTensor> inputs = {{"x", floats({1, 2, -3, 4}, {1, 4})}};
  ASSERT_TRUE(compareModels(cpuSide(a), cpuSide(a), inputs).isOk());
  auto bisect = bisectModels(cpuSide(a), cpuSide(b), inputs);
  ASSERT_TRUE(bisect.isOk()) << bisect.status().toString();
  ASSERT_TRUE(bisect->firstDivergence.has_value());
  EXPECT_EQ(bisect->firstDivergence->node, "loop_add");
  ASSERT_EQ(bisect->firstDivergence->outputs.size(), 1u);
  EXPECT_EQ(bisect->firstDivergence->outputs[0].shape, (Shape{3, 1, 4}));  // every iteration, stacked
}

}  // namespace
}  // namespace kiln
