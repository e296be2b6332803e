#include "graph_generator.h"

#include <algorithm>
#include <cmath>

namespace kiln::difftest {

int64_t GenValue::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

GraphGenerator::GraphGenerator(uint64_t seed, testing::GraphBuilder& graph) : rng_(seed), graph_(&graph) {}

int64_t GraphGenerator::uniformInt(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(rng_() % span);
}

double GraphGenerator::uniform(double lo, double hi) {
  const double unit = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * unit;
}

bool GraphGenerator::chance(double p) { return uniform(0, 1) < p; }

std::string GraphGenerator::fresh(const std::string& prefix) { return prefix + "_" + std::to_string(counter_++); }

std::optional<GenValue> GraphGenerator::pickValue(const std::function<bool(const GenValue&)>& accept) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (accept(values_[i])) candidates.push_back(i);
  }
  if (candidates.empty()) return std::nullopt;
  // Half the time the newest candidate: chains grow deep instead of every op reading the graph input.
  if (chance(0.5)) return values_[candidates.back()];
  return values_[candidates[static_cast<size_t>(uniformInt(0, static_cast<int64_t>(candidates.size()) - 1))]];
}

void GraphGenerator::addValue(GenValue value) { values_.push_back(std::move(value)); }

std::string GraphGenerator::floatConst(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  const std::string name = fresh("c");
  graph_->initializer(name, dims, values);
  return name;
}

std::string GraphGenerator::randomFloatConst(const std::vector<int64_t>& dims, double lo, double hi) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = static_cast<float>(uniform(lo, hi));
  return floatConst(dims, values);
}

std::string GraphGenerator::int64Const(const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  return typedConst(onnx::TensorProto::INT64, dims, std::vector<double>(values.begin(), values.end()));
}

std::string GraphGenerator::typedConst(int32_t type, const std::vector<int64_t>& dims,
                                       const std::vector<double>& values) {
  const std::string name = fresh("c");
  testing::initializer(*graph_, name, dims, type, values);
  return name;
}

onnx::NodeProto& GraphGenerator::node(const std::string& opType, const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& outputs) {
  return graph_->node(opType, inputs, outputs, fresh(opType));
}

GenValue GraphGenerator::positive(const GenValue& x) {
  GenValue abs{fresh("abs"), x.type, x.dims, x.bound, x.exact, x.slack};
  node("Abs", {x.name}, {abs.name});
  GenValue out{fresh("pos"), x.type, x.dims, x.bound + 0.5, false, x.slack};
  node("Add", {abs.name, floatConst({}, {0.5f})}, {out.name});
  addValue(abs);
  addValue(out);
  return out;
}

std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcastable(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const int64_t da = a[a.size() - i], db = b[b.size() - i];
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

const std::vector<OpKind>& allOps() {
  static const std::vector<OpKind> ops = [] {
    std::vector<OpKind> all = elementwiseOps();
    for (auto* more : {&shapeOps, &nnOps}) {
      std::vector<OpKind> kinds = (*more)();
      all.insert(all.end(), kinds.begin(), kinds.end());
    }
    return all;
  }();
  return ops;
}

namespace {

// Graph input shapes: rank 1-4, dims mostly 1-7, sometimes 0 (an empty tensor).
std::vector<int64_t> randomInputShape(GraphGenerator& gen) {
  static const std::vector<int64_t> kDims = {1, 2, 3, 4, 5, 6, 7, 8};
  const int rank = static_cast<int>(gen.uniformInt(1, 4));
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(gen.pick(kDims));
  if (gen.chance(0.03)) dims[static_cast<size_t>(gen.uniformInt(0, rank - 1))] = 0;
  return dims;
}

Tensor randomFloatTensor(GraphGenerator& gen, const std::vector<int64_t>& dims) {
  Tensor t(DataType::FLOAT, dims);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(gen.uniform(-2, 2));
  return t;
}

}  // namespace

GeneratedCase generateCase(uint64_t seed, const GeneratorOptions& options) {
  testing::ModelBuilder model(options.opset);
  GraphGenerator gen(seed, model);
  GeneratedCase out;
  const int inputCount = gen.chance(0.3) ? 2 : 1;
  for (int i = 0; i < inputCount; ++i) {
    // A second input often has the first one's shape so binary ops can pair them.
    std::vector<int64_t> dims = i > 0 && gen.chance(0.6) ? gen.values()[0].dims : randomInputShape(gen);
    if (i == 0 && gen.chance(0.35)) dims = {1, gen.pick(std::vector<int64_t>{1, 2, 3, 4}), 0, 0};
    if (i == 0 && dims.size() == 4 && dims[2] == 0 && dims[3] == 0) {
      dims[2] = gen.uniformInt(3, 9);
      dims[3] = gen.uniformInt(3, 9);
    }
    const std::string name = "x" + std::to_string(i);
    model.input(name, dims);
    gen.addValue({name, onnx::TensorProto::FLOAT, dims, 2.0, true, 0});
    out.inputs.push_back({name, randomFloatTensor(gen, dims)});
  }
  std::vector<const OpKind*> kinds;
  for (const OpKind& kind : allOps()) {
    if (options.onlyOps.empty() ||
        std::find(options.onlyOps.begin(), options.onlyOps.end(), kind.name) != options.onlyOps.end())
      kinds.push_back(&kind);
  }
  const int target = static_cast<int>(gen.uniformInt(options.minNodes, options.maxNodes));
  for (int attempt = 0; attempt < 200 && gen.nodeCount() < target && !kinds.empty(); ++attempt) {
    const OpKind& kind = *gen.pick(kinds);
    if (kind.make(gen)) out.opKinds.push_back(kind.name);
  }
  // Outputs: the newest value and sometimes one more, never a graph input.
  if (gen.values().size() == static_cast<size_t>(inputCount)) {
    GenValue y{"identity", onnx::TensorProto::FLOAT, gen.values()[0].dims, 2.0, true, 0};
    gen.node("Identity", {gen.values()[0].name}, {y.name});
    gen.addValue(y);
  }
  std::vector<const GenValue*> computed;
  for (size_t i = static_cast<size_t>(inputCount); i < gen.values().size(); ++i) computed.push_back(&gen.values()[i]);
  std::vector<const GenValue*> outputs = {computed.back()};
  if (computed.size() > 2 && gen.chance(0.4)) {
    const GenValue* other = computed[static_cast<size_t>(gen.uniformInt(0, static_cast<int64_t>(computed.size()) - 2))];
    outputs.push_back(other);
  }
  for (const GenValue* v : outputs) {
    model.output(v->name, v->dims, v->type);
    out.outputNames.push_back(v->name);
    out.outputSlack.push_back(v->slack);
  }
  for (const GenValue& v : gen.values()) {
    std::string dims;
    for (int64_t d : v.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    out.valueListing += v.name + " type " + std::to_string(v.type) + " [" + dims + "] bound " + std::to_string(v.bound) +
                        (v.exact ? " exact" : "") + " slack " + std::to_string(v.slack) + "\n";
  }
  out.model = model.build();
  return out;
}

}  // namespace kiln::difftest
