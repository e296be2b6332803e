// Op makers for Resize and for patterns of several nodes: If with two different bodies, and QDQ (Quantize then
// Dequantize, alone or around a Conv whose weights are int8, which Kiln and onnxruntime fuse into QLinearConv).
#include <algorithm>
#include <cmath>

#include "graph_generator.h"

namespace kiln::difftest {

namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

// True when some output index of a nearest Resize maps to an input coordinate on a rounding boundary (an integer
// for floor/ceil, a half for the round modes). There two correct runtimes differ: onnxruntime computes
// (j + 0.5) / scale - 0.5 in float, 3.9999996 for 9 -> 5 at j = 2, where the exact value is 4 (seeds 108889, 109622,
// 110727 of the long run). `scale` is the float the runtime divides by.
bool nearestOnBoundary(int64_t in, int64_t out, double scale, const std::string& coordinates,
                       const std::string& nearestMode) {
  const double half = nearestMode.rfind("round", 0) == 0 ? 0.5 : 0.0;
  for (int64_t j = 0; j < out; ++j) {
    double x = 0;
    if (coordinates == "asymmetric") x = static_cast<double>(j) / scale;
    else if (coordinates == "align_corners") x = out == 1 ? 0 : static_cast<double>(j * (in - 1)) / static_cast<double>(out - 1);
    else if (coordinates == "pytorch_half_pixel" && out == 1) x = 0;
    else x = (static_cast<double>(j) + 0.5) / scale - 0.5;
    const double offset = x - half - std::floor(x - half);
    if (offset < 1e-4 || offset > 1 - 1e-4) return true;
  }
  return false;
}

}  // namespace

bool resize(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.rank() == 4 && v.numel() > 0 && v.numel() <= 4096; });
  if (!x) return false;
  const std::string mode = gen.pick(std::vector<std::string>{"nearest", "linear", "linear", "cubic"});
  const std::string coordinates =
      gen.pick(std::vector<std::string>{"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"});
  const std::vector<float> kScales = {0.5f, 0.75f, 1.5f, 2.0f, 3.0f, 0.6f, 1.0f};
  std::vector<int64_t> dims = x->dims;
  std::vector<float> scales = {1, 1};
  for (int i = 2; i < 4; ++i) {
    const float s = gen.pick(kScales);
    const auto out = static_cast<int64_t>(std::floor(static_cast<double>(x->dims[static_cast<size_t>(i)]) * s));
    if (out < 1) return false;
    scales.push_back(s);
    dims[static_cast<size_t>(i)] = out;
  }
  std::vector<std::string> inputs = {x->name, ""};
  if (gen.chance(0.6)) {
    inputs.push_back(gen.floatConst({4}, scales));
  } else {
    inputs.push_back("");
    inputs.push_back(gen.int64Const({4}, dims));
  }
  const std::string nearestMode =
      gen.pick(std::vector<std::string>{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  if (mode == "nearest") {
    for (size_t i = 2; i < 4; ++i) {
      const double scale = inputs.size() == 3 ? static_cast<double>(scales[i])
                                              : static_cast<double>(static_cast<float>(dims[i]) / static_cast<float>(x->dims[i]));
      if (nearestOnBoundary(x->dims[i], dims[i], scale, coordinates, nearestMode)) return false;
    }
  }
  // Nearest picks one input element: exact in, exact out. Cubic overshoots by up to ~1.25x.
  GenValue out{gen.fresh("Resize"), kFloat, dims, x->bound * (mode == "cubic" ? 1.6 : 1), mode == "nearest" && x->exact,
               x->slack * 1.6};
  onnx::NodeProto& node = gen.node("Resize", inputs, {out.name});
  testing::attrString(node, "mode", mode);
  testing::attrString(node, "coordinate_transformation_mode", coordinates);
  if (mode == "nearest") testing::attrString(node, "nearest_mode", nearestMode);
  gen.addValue(out);
  return true;
}

// If on a condition computed exactly (ReduceMax of an exact value > threshold), with bodies that read an outer value
// through different ops.
bool ifThenElse(GraphGenerator& gen) {
  auto c = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.exact && v.numel() > 0; });
  auto y = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.bound <= 100; });
  if (!c || !y) return false;
  const std::string max = gen.fresh("cond_max"), cond = gen.fresh("cond");
  testing::attrInt(gen.node("ReduceMax", {c->name}, {max}), "keepdims", 0);
  gen.node("Greater", {max, gen.floatConst({}, {static_cast<float>(gen.uniform(-0.5, 1.0))})}, {cond});
  const std::vector<std::string> kBodyOps = {"Relu", "Sigmoid", "Neg", "Tanh", "Abs", "Identity"};
  auto body = [&](const std::string& branch) {
    testing::GraphBuilder b(branch);
    const std::string out = gen.fresh(branch + "_out");
    const std::string op = gen.pick(kBodyOps);
    if (gen.chance(0.4)) {
      const std::string mid = gen.fresh(branch + "_mid");
      b.node(op, {y->name}, {mid}, gen.fresh(op));
      b.initializer(gen.fresh(branch + "_c"), {}, {static_cast<float>(gen.uniform(-1, 1))});
      b.node("Add", {mid, b.proto().initializer(0).name()}, {out}, gen.fresh("Add"));
    } else {
      b.node(op, {y->name}, {out}, gen.fresh(op));
    }
    b.output(out, y->dims);
    return b.proto();
  };
  GenValue out{gen.fresh("If"), kFloat, y->dims, y->bound + 1, false, y->slack};
  onnx::NodeProto& node = gen.node("If", {cond}, {out.name});
  testing::attrGraph(node, "then_branch", body("then"));
  testing::attrGraph(node, "else_branch", body("else"));
  gen.addValue(out);
  return true;
}

// QuantizeLinear then DequantizeLinear (uint8 or int8, a power-of-two scale so x / scale is exact), or the QDQ
// form of a Conv: DQ(Q(x)) and DQ(int8 weights) into Conv, then Q and DQ of its output.
bool quantizeDequantize(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.bound <= 1e3 && v.numel() <= 8192; });
  if (!x) return false;
  const bool isUnsigned = gen.chance(0.5);
  const int32_t qtype = isUnsigned ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  auto qdq = [&](const GenValue& in, float scale, const std::string& prefix) {
    const std::string s = gen.floatConst({}, {scale});
    const std::string zp = gen.typedConst(qtype, {}, {isUnsigned ? 128.0 : static_cast<double>(gen.uniformInt(-8, 8))});
    const std::string q = gen.fresh(prefix + "_q");
    gen.node("QuantizeLinear", {in.name, s, zp}, {q});
    GenValue out{gen.fresh(prefix + "_dq"), kFloat, in.dims, std::min(in.bound, 140.0 * scale), false,
                 in.slack + (in.exact ? 0 : scale)};
    gen.node("DequantizeLinear", {q, s, zp}, {out.name});
    gen.addValue(out);
    return out;
  };
  const float inScale = std::ldexp(1.0f, static_cast<int>(gen.uniformInt(-6, -3)));
  // Not over zero input channels: onnxruntime 1.30's fused QLinearConv then returns a constant instead of the
  // zero point (Kiln returns 0, the ONNX definition; found by kiln-difftest seed 953, tests/difftest/README.md).
  // Not over empty inputs either: onnxruntime refuses a Conv whose spatial output is empty.
  if (x->rank() != 4 || x->dims[1] > 8 || x->numel() == 0 || gen.chance(0.4)) {
    qdq(*x, inScale, "qdq");
    return true;
  }
  GenValue in = qdq(*x, inScale, "qconv_in");
  const int64_t cin = in.dims[1], cout = gen.uniformInt(1, 4), k = gen.chance(0.5) ? 3 : 1;
  std::vector<double> w(static_cast<size_t>(cout * cin * k * k));
  for (double& v : w) v = static_cast<double>(gen.uniformInt(-127, 127));
  const std::string wq = gen.typedConst(onnx::TensorProto::INT8, {cout, cin, k, k}, w);
  const float wScale = 1.0f / (127.0f * std::sqrt(static_cast<float>(cin * k * k)));
  const std::string wdq = gen.fresh("w_dq");
  gen.node("DequantizeLinear", {wq, gen.floatConst({}, {wScale}), gen.typedConst(onnx::TensorProto::INT8, {}, {0})}, {wdq});
  std::vector<int64_t> dims = {in.dims[0], cout, in.dims[2] - k + 1 + 2 * (k / 2), in.dims[3] - k + 1 + 2 * (k / 2)};
  const double scale = std::sqrt(static_cast<double>(cin * k * k));
  GenValue conv{gen.fresh("qconv"), kFloat, dims, in.bound * scale, false, in.slack * scale};
  onnx::NodeProto& node = gen.node("Conv", {in.name, wdq}, {conv.name});
  testing::attrInts(node, "kernel_shape", {k, k});
  testing::attrInts(node, "pads", {k / 2, k / 2, k / 2, k / 2});
  gen.addValue(conv);
  const float outScale = std::ldexp(1.0f, static_cast<int>(gen.uniformInt(-5, -3)));
  GenValue out = qdq(conv, outScale, "qconv_out");
  (void)out;
  return true;
}

}  // namespace kiln::difftest
