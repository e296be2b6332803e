// Op makers with arithmetic over many elements: MatMul, Gemm, Conv, ConvTranspose, pooling, normalizations,
// Softmax, reductions, ArgMax, TopK, CumSum, Resize, and the If and QDQ patterns.
#include <algorithm>
#include <cmath>

#include "graph_generator.h"

namespace kiln::difftest {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

std::optional<GenValue> pickFloat(GraphGenerator& gen, int minRank, int maxRank, double maxBound = 1e3) {
  return gen.pickValue([&](const GenValue& v) {
    return v.isFloat() && v.rank() >= minRank && v.rank() <= maxRank && v.bound <= maxBound && v.numel() > 0 &&
           v.numel() <= 8192;
  });
}

// Weights in [-1, 1] / sqrt(fan-in): outputs keep the input's magnitude.
std::string weights(GraphGenerator& gen, const std::vector<int64_t>& dims, int64_t fanIn) {
  const double w = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, fanIn)));
  return gen.randomFloatConst(dims, -w, w);
}

bool matmul(GraphGenerator& gen) {
  auto a = pickFloat(gen, 1, 4);
  if (!a) return false;
  const int64_t k = a->dims.back(), n = gen.uniformInt(1, 8);
  std::vector<int64_t> dims = a->dims;
  std::vector<int64_t> wdims = {k, n};
  if (a->rank() >= 3 && gen.chance(0.3)) wdims.insert(wdims.begin(), a->dims[a->dims.size() - 3]);  // batched B
  if (a->rank() == 1) {
    dims = {n};
  } else {
    dims.back() = n;
  }
  const double scale = std::sqrt(static_cast<double>(k));
  GenValue out{gen.fresh("MatMul"), kFloat, dims, a->bound * scale, false, a->slack * scale};
  gen.node("MatMul", {a->name, weights(gen, wdims, k)}, {out.name});
  gen.addValue(out);
  return true;
}

bool gemm(GraphGenerator& gen) {
  auto a = pickFloat(gen, 2, 2);
  if (!a) return false;
  const bool transA = gen.chance(0.3), transB = gen.chance(0.5);
  const int64_t m = transA ? a->dims[1] : a->dims[0], k = transA ? a->dims[0] : a->dims[1], n = gen.uniformInt(1, 8);
  const float alpha = static_cast<float>(gen.uniform(0.5, 1.5)), beta = static_cast<float>(gen.uniform(0, 1));
  std::vector<std::string> inputs = {a->name, weights(gen, transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, k)};
  if (gen.chance(0.7)) inputs.push_back(gen.randomFloatConst(gen.chance(0.5) ? std::vector<int64_t>{n} : std::vector<int64_t>{m, n}, -1, 1));
  const double scale = 1.5 * std::sqrt(static_cast<double>(k));
  GenValue out{gen.fresh("Gemm"), kFloat, {m, n}, a->bound * scale + 1, false, a->slack * scale};
  onnx::NodeProto& node = gen.node("Gemm", inputs, {out.name});
  testing::attrInt(node, "transA", transA);
  testing::attrInt(node, "transB", transB);
  testing::attrFloat(node, "alpha", alpha);
  testing::attrFloat(node, "beta", beta);
  gen.addValue(out);
  return true;
}

// Spatial attributes of a window of size `kernel` over `in` that fits: stride, pads, dilation; the output length.
struct Window {
  int64_t kernel = 1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0;
  // How far the window's first element can move: negative when the window is larger than the padded input.
  int64_t span(int64_t in) const { return in + padBegin + padEnd - dilation * (kernel - 1) - 1; }
  int64_t output(int64_t in, bool ceil = false) const {
    return (ceil ? (span(in) + stride - 1) / stride : span(in) / stride) + 1;
  }
};

std::optional<std::vector<Window>> windows(GraphGenerator& gen, const std::vector<int64_t>& dims, bool dilate) {
  std::vector<Window> w;
  for (size_t i = 2; i < dims.size(); ++i) {
    Window s;
    s.kernel = gen.uniformInt(1, 3);
    s.stride = gen.chance(0.3) ? 2 : 1;
    s.dilation = dilate && gen.chance(0.2) ? 2 : 1;
    s.padBegin = gen.uniformInt(0, s.kernel - 1);
    s.padEnd = gen.uniformInt(0, s.kernel - 1);
    if (s.span(dims[i]) < 0) return std::nullopt;  // (C++ division would truncate a negative span to output 1)
    w.push_back(s);
  }
  return w;
}

void windowAttributes(onnx::NodeProto& node, const std::vector<Window>& w, bool dilations) {
  std::vector<int64_t> kernel, strides, pads, dil;
  for (const Window& s : w) kernel.push_back(s.kernel), strides.push_back(s.stride), dil.push_back(s.dilation);
  for (const Window& s : w) pads.push_back(s.padBegin);
  for (const Window& s : w) pads.push_back(s.padEnd);
  testing::attrInts(node, "kernel_shape", kernel);
  testing::attrInts(node, "strides", strides);
  testing::attrInts(node, "pads", pads);
  if (dilations) testing::attrInts(node, "dilations", dil);
}

bool conv(GraphGenerator& gen) {
  auto x = pickFloat(gen, 3, 4);
  if (!x) return false;
  auto w = windows(gen, x->dims, true);
  if (!w) return false;
  const int64_t cin = x->dims[1];
  const int64_t group = cin > 1 && cin % 2 == 0 && gen.chance(0.3) ? (gen.chance(0.5) ? cin : 2) : 1;
  const int64_t cout = group * gen.uniformInt(1, 3);
  std::vector<int64_t> wdims = {cout, cin / group}, dims = {x->dims[0], cout};
  int64_t fanIn = cin / group;
  for (size_t i = 0; i < w->size(); ++i) {
    wdims.push_back((*w)[i].kernel);
    fanIn *= (*w)[i].kernel;
    dims.push_back((*w)[i].output(x->dims[i + 2]));
  }
  std::vector<std::string> inputs = {x->name, weights(gen, wdims, fanIn)};
  if (gen.chance(0.6)) inputs.push_back(gen.randomFloatConst({cout}, -0.5, 0.5));
  const double scale = std::sqrt(static_cast<double>(fanIn));
  GenValue out{gen.fresh("Conv"), kFloat, dims, x->bound * scale + 0.5, false, x->slack * scale};
  onnx::NodeProto& node = gen.node("Conv", inputs, {out.name});
  windowAttributes(node, *w, true);
  testing::attrInt(node, "group", group);
  gen.addValue(out);
  return true;
}

bool convTranspose(GraphGenerator& gen) {
  auto x = pickFloat(gen, 4, 4);
  if (!x) return false;
  const int64_t cin = x->dims[1], cout = gen.uniformInt(1, 3), k = gen.uniformInt(1, 3), stride = gen.uniformInt(1, 2);
  const int64_t pad = gen.uniformInt(0, k - 1);
  std::vector<int64_t> dims = {x->dims[0], cout};
  for (int i = 2; i < 4; ++i) {
    dims.push_back(stride * (x->dims[static_cast<size_t>(i)] - 1) + k - 2 * pad);
    if (dims.back() < 1) return false;
  }
  const double scale = std::sqrt(static_cast<double>(cin * k * k));
  GenValue out{gen.fresh("ConvTranspose"), kFloat, dims, x->bound * scale, false, x->slack * scale};
  onnx::NodeProto& node = gen.node("ConvTranspose", {x->name, weights(gen, {cin, cout, k, k}, cin * k)}, {out.name});
  testing::attrInts(node, "kernel_shape", {k, k});
  testing::attrInts(node, "strides", {stride, stride});
  testing::attrInts(node, "pads", {pad, pad, pad, pad});
  gen.addValue(out);
  return true;
}

bool pool(GraphGenerator& gen) {
  auto x = pickFloat(gen, 3, 4);
  if (!x) return false;
  const std::string op = gen.pick(std::vector<std::string>{"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"});
  std::vector<int64_t> dims = {x->dims[0], x->dims[1]};
  const bool exact = op.find("Max") != std::string::npos && x->exact;
  if (op.rfind("Global", 0) == 0) {
    dims.resize(x->dims.size(), 1);
    GenValue out{gen.fresh(op), kFloat, dims, x->bound, exact, x->slack};
    gen.node(op, {x->name}, {out.name});
    gen.addValue(out);
    return true;
  }
  auto w = windows(gen, x->dims, op == "MaxPool");
  if (!w) return false;
  // ceil_mode: the last window must start inside the input or its begin padding (else onnxruntime drops it).
  bool ceil = gen.chance(0.3);
  for (size_t i = 0; i < w->size(); ++i) {
    const Window& s = (*w)[i];
    for (size_t j = 0; j < w->size(); ++j) {
      if ((*w)[j].padBegin >= (*w)[j].kernel || (*w)[j].padEnd >= (*w)[j].kernel) return false;
    }
    if (ceil && (s.output(x->dims[i + 2], true) - 1) * s.stride >= x->dims[i + 2] + s.padBegin) ceil = false;
  }
  for (size_t i = 0; i < w->size(); ++i) dims.push_back((*w)[i].output(x->dims[i + 2], ceil));
  GenValue out{gen.fresh(op), kFloat, dims, x->bound, exact, x->slack};
  onnx::NodeProto& node = gen.node(op, {x->name}, {out.name});
  windowAttributes(node, *w, op == "MaxPool");
  testing::attrInt(node, "ceil_mode", ceil);
  if (op == "AveragePool") testing::attrInt(node, "count_include_pad", gen.chance(0.5));
  gen.addValue(out);
  return true;
}

bool normalization(GraphGenerator& gen) {
  auto x = pickFloat(gen, 2, 4);
  if (!x) return false;
  const std::string op = gen.pick(std::vector<std::string>{"BatchNormalization", "InstanceNormalization", "LayerNormalization"});
  const int64_t c = x->dims[1];
  GenValue out{gen.fresh(op), kFloat, x->dims, 0, false, 0};
  if (op == "BatchNormalization") {
    const std::string mean = gen.randomFloatConst({c}, -0.5, 0.5), var = gen.randomFloatConst({c}, 0.5, 2);
    gen.node(op, {x->name, gen.randomFloatConst({c}, 0.5, 1.5), gen.randomFloatConst({c}, -0.5, 0.5), mean, var}, {out.name});
    out.bound = 1.5 * (x->bound + 0.5) / std::sqrt(0.5) + 0.5;
    out.slack = x->slack * 1.5 / std::sqrt(0.5);
  } else if (op == "InstanceNormalization") {
    if (x->rank() < 3) return false;
    testing::attrFloat(gen.node(op, {x->name, gen.randomFloatConst({c}, 0.5, 1.5), gen.randomFloatConst({c}, -0.5, 0.5)}, {out.name}),
                       "epsilon", 1e-3f);
    out.bound = 1.5 * std::sqrt(static_cast<double>(x->numel())) + 0.5;
    out.slack = x->slack * 1e3;  // normalized by a variance that may be tiny: no useful bound
  } else {
    const int64_t axis = gen.uniformInt(1, x->rank() - 1);
    std::vector<int64_t> normalized(x->dims.begin() + axis, x->dims.end());
    onnx::NodeProto& node = gen.node(op, {x->name, gen.randomFloatConst(normalized, 0.5, 1.5),
                                          gen.randomFloatConst(normalized, -0.5, 0.5)}, {out.name});
    testing::attrInt(node, "axis", gen.chance(0.3) ? axis - x->rank() : axis);
    testing::attrFloat(node, "epsilon", 1e-3f);
    out.bound = 1.5 * std::sqrt(static_cast<double>(x->numel())) + 0.5;
    out.slack = x->slack * 1e3;
  }
  gen.addValue(out);
  return true;
}

bool softmax(GraphGenerator& gen) {
  auto x = pickFloat(gen, 1, 4, 50);
  if (!x) return false;
  const std::string op = gen.chance(0.6) ? "Softmax" : "LogSoftmax";
  const int64_t axis = gen.uniformInt(-x->rank(), x->rank() - 1);
  GenValue out{gen.fresh(op), kFloat, x->dims, op == "Softmax" ? 1 : 2 * x->bound + 10, false, 2 * x->slack};
  testing::attrInt(gen.node(op, {x->name}, {out.name}), "axis", axis);
  gen.addValue(out);
  return true;
}

// Reduce* over random axes (attribute at opset 17, an input for ReduceSum), keepdims either way.
bool reduce(GraphGenerator& gen) {
  auto x = pickFloat(gen, 1, 4, 100);
  if (!x) return false;
  const std::string op = gen.pick(std::vector<std::string>{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1",
                                                           "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"});
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (gen.chance(0.5)) axes.push_back(gen.chance(0.3) ? i - x->rank() : i);
  }
  const bool keep = gen.chance(0.5), all = axes.empty() && gen.chance(0.5);
  std::vector<int64_t> dims;
  int64_t reduced = 1;
  for (int64_t i = 0; i < x->rank(); ++i) {
    const bool hit = all || axes.empty() || std::find_if(axes.begin(), axes.end(), [&](int64_t a) {
                                              return (a + x->rank()) % x->rank() == i;
                                            }) != axes.end();
    if (hit) reduced *= x->dims[static_cast<size_t>(i)];
    if (!hit) dims.push_back(x->dims[static_cast<size_t>(i)]);
    else if (keep) dims.push_back(1);
  }
  if (op == "ReduceProd" && (reduced > 6 || x->bound > 2)) return false;
  const double n = static_cast<double>(reduced), b = x->bound;
  double bound = b, gain = 1;
  if (op == "ReduceSum" || op == "ReduceL1") bound = n * b, gain = n;
  if (op == "ReduceL2") bound = std::sqrt(n) * b, gain = std::sqrt(n);
  if (op == "ReduceSumSquare") bound = n * b * b, gain = 2 * n * b;
  if (op == "ReduceLogSumExp") bound = b + std::log(n) + 1;
  if (op == "ReduceProd") bound = std::pow(b, n) + 1, gain = n * std::pow(b, n);
  GenValue out{gen.fresh(op), kFloat, dims, bound, x->exact && (op == "ReduceMax" || op == "ReduceMin"), x->slack * gain};
  std::vector<std::string> inputs = {x->name};
  if (op == "ReduceSum" && !axes.empty()) inputs.push_back(gen.int64Const({static_cast<int64_t>(axes.size())}, axes));
  onnx::NodeProto& node = gen.node(op, inputs, {out.name});
  if (op != "ReduceSum" && !axes.empty()) testing::attrInts(node, "axes", axes);
  testing::attrInt(node, "keepdims", keep);
  gen.addValue(out);
  return true;
}

// ArgMax/ArgMin (ties: the first index, or the last with select_last_index) and TopK of an exact value.
bool argTopK(GraphGenerator& gen) {
  auto x = gen.pickValue([](const GenValue& v) { return v.isFloat() && v.exact && v.rank() >= 1 && v.numel() > 0; });
  if (!x) return false;
  const int64_t axis = gen.uniformInt(0, x->rank() - 1), n = x->dims[static_cast<size_t>(axis)];
  if (gen.chance(0.5)) {
    const std::string op = gen.chance(0.5) ? "ArgMax" : "ArgMin";
    const bool keep = gen.chance(0.5);
    std::vector<int64_t> dims = x->dims;
    if (keep) dims[static_cast<size_t>(axis)] = 1;
    else dims.erase(dims.begin() + axis);
    GenValue out{gen.fresh(op), onnx::TensorProto::INT64, dims, static_cast<double>(n), true, 0};
    onnx::NodeProto& node = gen.node(op, {x->name}, {out.name});
    testing::attrInt(node, "axis", axis);
    testing::attrInt(node, "keepdims", keep);
    testing::attrInt(node, "select_last_index", gen.chance(0.3));
    gen.addValue(out);
    return true;
  }
  const int64_t k = gen.uniformInt(1, n);
  std::vector<int64_t> dims = x->dims;
  dims[static_cast<size_t>(axis)] = k;
  GenValue values{gen.fresh("TopK"), kFloat, dims, x->bound, true, 0};
  GenValue indices{gen.fresh("TopK_indices"), onnx::TensorProto::INT64, dims, static_cast<double>(n), true, 0};
  onnx::NodeProto& node = gen.node("TopK", {x->name, gen.int64Const({1}, {k})}, {values.name, indices.name});
  testing::attrInt(node, "axis", gen.chance(0.3) ? axis - x->rank() : axis);
  testing::attrInt(node, "largest", gen.chance(0.7));
  gen.addValue(values);
  gen.addValue(indices);
  return true;
}

bool cumsum(GraphGenerator& gen) {
  auto x = pickFloat(gen, 1, 4, 100);
  if (!x) return false;
  const int64_t axis = gen.uniformInt(0, x->rank() - 1);
  const double n = static_cast<double>(x->dims[static_cast<size_t>(axis)]);
  GenValue out{gen.fresh("CumSum"), kFloat, x->dims, x->bound * n, false, x->slack * n};
  onnx::NodeProto& node = gen.node("CumSum", {x->name, gen.int64Const({}, {axis})}, {out.name});
  testing::attrInt(node, "exclusive", gen.chance(0.3));
  testing::attrInt(node, "reverse", gen.chance(0.3));
  gen.addValue(out);
  return true;
}

}  // namespace

bool resize(GraphGenerator& gen);
bool ifThenElse(GraphGenerator& gen);
bool quantizeDequantize(GraphGenerator& gen);

std::vector<OpKind> nnOps() {
  return {{"MatMul", matmul}, {"Gemm", gemm},       {"Conv", conv},       {"ConvTranspose", convTranspose},
          {"Pool", pool},     {"Norm", normalization}, {"Softmax", softmax}, {"Reduce", reduce},
          {"ArgTopK", argTopK}, {"CumSum", cumsum}, {"Resize", resize},   {"If", ifThenElse},
          {"QDQ", quantizeDequantize}};
}

}  // namespace kiln::difftest
