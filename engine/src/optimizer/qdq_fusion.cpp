// Pass (level `all`): onnxruntime's QDQ node units around Conv and MatMul become QLinearConv / QLinearMatMul,
// as its QDQSelectorActionTransformer does in its extended level (ConvNodeGroupSelector,
// MatMulNodeGroupSelector, with EnsureUniqueDQForNodeUnit's copies of shared DequantizeLinear nodes). The
// fused node accumulates the 8-bit values exactly in int32 and requantizes once, which is what onnxruntime
// computes; the float Conv + QuantizeLinear it replaces rounds differently (at most one output step apart),
// so the pass runs only at `all`.
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "ir/graph_paths.h"
#include "ir/scope_chain.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

namespace {

// The constant initializer `name` that `scope`'s graph reads (one no caller can override as a graph input),
// or nullptr.
const Tensor* constant(const ir::ScopeChain& scope, const std::string& name) {
  if (name.empty()) return nullptr;
  const ir::Graph* g = scope.initializerOwner(name);
  return g && isConstantInitializer(*g, name) ? &g->initializers.at(name) : nullptr;
}

// The producer of each value, how many nodes (or bodies) read it and the last node reading it as an input.
struct Uses {
  std::map<std::string, size_t> producer;
  std::map<std::string, int> readers;
  std::map<std::string, size_t> reader;
  std::set<std::string> kept;  // graph outputs

  int readersOf(const std::string& value) const {
    auto it = readers.find(value);
    return it == readers.end() ? 0 : it->second;
  }
  // Whether `value` is read once, by no body and no graph output: its producer may go with its one reader.
  bool readOnlyOnce(const std::string& value) const { return readersOf(value) == 1 && !kept.count(value); }
};

Uses usesOf(const ir::Graph& graph) {
  Uses uses;
  for (const auto& out : graph.outputs) uses.kept.insert(out.name);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    for (const auto& out : node.outputs) uses.producer[out] = i;
    for (const auto& in : node.inputs) {
      if (in.empty()) continue;
      ++uses.readers[in];
      uses.reader[in] = i;
    }
    if (ir::hasSubgraphs(node)) {
      for (const auto& in : graph.implicitInputs(node)) ++uses.readers[in];
    }
  }
  return uses;
}

std::string inputOf(const ir::Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : ""; }

bool isEightBit(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

bool perTensor(const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; }

// A DequantizeLinear or QuantizeLinear with constant float scale and zero point: the parameters the fused
// node reads, the 8-bit type and the number of values (1: per tensor).
struct Quantization {
  const ir::Node* node = nullptr;
  const Tensor* scale = nullptr;
  const Tensor* zeroPoint = nullptr;  // nullptr: omitted (0 of `type`)
  DataType type = DataType::UNDEFINED;

  float scaleAt(int64_t i) const { return scale->data<float>()[perTensor(*scale) ? 0 : i]; }
};

// The parameters of `node` (DequantizeLinear of `quantized`, or QuantizeLinear) when they are constant, the
// scale float and the zero point of the 8-bit type; nullopt otherwise. Per tensor, or `count` values along
// axis 0 of the rank-`axisRank` tensor it reads (count 1: per tensor only).
std::optional<Quantization> quantizationOf(const ir::ScopeChain& scope, const ir::Node& node,
                                           DataType quantized, int64_t count = 1, int64_t axisRank = 0) {
  if (!node.domain.empty() || node.outputs.size() != 1 || node.attrInt("block_size", 0) != 0)
    return std::nullopt;
  Quantization q;
  q.node = &node;
  q.scale = constant(scope, inputOf(node, 1));
  if (!q.scale || q.scale->dtype() != DataType::FLOAT) return std::nullopt;
  const std::string zero = inputOf(node, 2);
  if (!zero.empty()) {
    q.zeroPoint = constant(scope, zero);
    if (!q.zeroPoint) return std::nullopt;
    const bool bothPerTensor = perTensor(*q.zeroPoint) && perTensor(*q.scale);  // [] and [1] alike
    if (!bothPerTensor && q.zeroPoint->shape() != q.scale->shape()) return std::nullopt;
  }
  q.type = q.zeroPoint ? q.zeroPoint->dtype() : quantized;
  if (q.type == DataType::UNDEFINED) {  // QuantizeLinear without a zero point: uint8 unless output_dtype says
    q.type = node.hasAttribute("output_dtype") ? DataType::UNDEFINED : DataType::UINT8;
  }
  if (quantized != DataType::UNDEFINED && q.type != quantized) return std::nullopt;
  if (perTensor(*q.scale)) return q;
  int64_t axis = node.attrInt("axis", 1);
  if (axis < 0) axis += axisRank;
  if (count <= 1 || q.scale->rank() != 1 || q.scale->numel() != count || axis != 0) return std::nullopt;
  return q;
}

// The node unit around graph.nodes[at] (Conv or MatMul): its DequantizeLinear nodes (x, w, [bias]) and the
// QuantizeLinear of its output.
struct Unit {
  std::vector<Quantization> dqs;  // input order
  std::vector<size_t> dqAt;
  size_t q = 0;
  Quantization out;
};

// The DequantizeLinear node writing `value` in `graph`, or nullptr.
const ir::Node* dequantizerOf(const ir::Graph& graph, const Uses& uses, const std::string& value) {
  auto at = uses.producer.find(value);
  if (value.empty() || at == uses.producer.end()) return nullptr;
  const ir::Node& node = graph.nodes[at->second];
  return node.domain.empty() && node.opType == "DequantizeLinear" ? &node : nullptr;
}

// The 8-bit type `dq` reads: its input's known type, else its zero point's.
DataType quantizedType(const ir::ScopeChain& scope, const ir::Node& dq) {
  DataType type = scope.typeOf(dq.inputs[0]);
  if (type == DataType::UNDEFINED && !inputOf(dq, 2).empty()) type = scope.typeOf(dq.inputs[2]);
  return type;
}

// Whether the int32 bias of a QLinearConv is what DequantizeLinear `bias` computes: a constant [M] int32
// tensor whose scale is x_scale * w_scale (per channel, as float products) and whose zero point is 0.
bool exactBias(const ir::ScopeChain& scope, const ir::Node& bias, const Quantization& x,
               const Quantization& w, int64_t m) {
  const Tensor* values = constant(scope, bias.inputs[0]);
  if (!values || values->dtype() != DataType::INT32 || values->rank() != 1 || values->numel() != m)
    return false;
  auto q = quantizationOf(scope, bias, DataType::INT32, m, 1);
  if (!q) return false;
  for (int64_t c = 0; c < m; ++c) {
    if (q->scaleAt(c) != x.scaleAt(0) * w.scaleAt(c)) return false;
    if (q->zeroPoint && q->zeroPoint->data<int32_t>()[perTensor(*q->zeroPoint) ? 0 : c] != 0) return false;
  }
  return true;
}

// The unit around graph.nodes[at] when onnxruntime's selector takes it and Kiln's integer kernel computes it:
// every input dequantized (x and y per tensor, of one 8-bit type; int8 x needs int8 w), the output read only
// by a per-tensor QuantizeLinear and not a graph output; Conv: w a constant, per tensor or per output
// channel, the bias int32 with scale x_scale * w_scale and zero point 0; MatMul: b per tensor. nullopt
// otherwise.
std::optional<Unit> unitAround(const ir::Graph& graph, const ir::ScopeChain& scope, const Uses& uses,
                               size_t at) {
  const ir::Node& op = graph.nodes[at];
  const bool conv = op.opType == "Conv";
  if (!op.domain.empty() || !(conv || op.opType == "MatMul") || op.outputs.size() != 1) return std::nullopt;
  if (op.inputs.size() != 2 && !(conv && op.inputs.size() == 3)) return std::nullopt;
  const size_t inputs = inputOf(op, 2).empty() ? 2 : 3;
  const std::string& result = op.outputs[0];
  if (!uses.readOnlyOnce(result)) return std::nullopt;
  Unit unit;
  unit.q = uses.reader.at(result);
  const ir::Node& q = graph.nodes[unit.q];
  if (!q.domain.empty() || q.opType != "QuantizeLinear" || inputOf(q, 0) != result) return std::nullopt;
  const ir::Node* x = dequantizerOf(graph, uses, inputOf(op, 0));
  const ir::Node* w = dequantizerOf(graph, uses, inputOf(op, 1));
  if (!x || !w) return std::nullopt;
  auto xq = quantizationOf(scope, *x, quantizedType(scope, *x));
  if (!xq || !isEightBit(xq->type)) return std::nullopt;
  auto yq = quantizationOf(scope, q, DataType::UNDEFINED);
  if (!yq || yq->type != xq->type) return std::nullopt;
  const DataType wType = quantizedType(scope, *w);
  if (!isEightBit(wType) || (xq->type == DataType::INT8 && wType != DataType::INT8)) return std::nullopt;
  std::optional<Quantization> wq;
  if (conv) {
    const Tensor* weights = constant(scope, w->inputs[0]);
    if (!weights || weights->rank() < 3) return std::nullopt;
    wq = quantizationOf(scope, *w, wType, weights->shape()[0], weights->rank());
  } else {
    wq = quantizationOf(scope, *w, wType);
  }
  if (!wq) return std::nullopt;
  unit.dqs = {*xq, *wq};
  if (inputs == 3) {
    const ir::Node* bias = dequantizerOf(graph, uses, op.inputs[2]);
    const int64_t m = constant(scope, w->inputs[0])->shape()[0];
    if (!bias || !exactBias(scope, *bias, *xq, *wq, m)) return std::nullopt;
    unit.dqs.push_back(Quantization{bias, nullptr, nullptr, DataType::INT32});
  }
  for (size_t i = 0; i < inputs; ++i) unit.dqAt.push_back(uses.producer.at(op.inputs[i]));
  unit.out = *yq;
  return unit;
}

// The zero point input of the fused node for `q`: its own, or a new 0 of its type shaped like its scale.
std::string zeroPointInput(ir::Graph& graph, const Quantization& q) {
  const std::string given = inputOf(*q.node, 2);
  if (!given.empty()) return given;
  std::string name = q.node->outputs[0] + "_zero_point";
  while (graph.initializers.count(name) || graph.findValueInfo(name)) name += "_";
  const Shape shape = q.scale->shape();
  const auto count = static_cast<size_t>(q.scale->numel());
  graph.initializers[name] = q.type == DataType::INT8
                                 ? Tensor::fromVector<int8_t>(shape, std::vector<int8_t>(count))
                                 : Tensor::fromVector<uint8_t>(shape, std::vector<uint8_t>(count));
  return name;
}

int64_t fuseInGraph(ir::Graph& graph, const std::vector<const ir::Graph*>& enclosing) {
  const Uses uses = usesOf(graph);
  const ir::ScopeChain scope(graph, enclosing);
  // Units share no node but a DequantizeLinear that other nodes read too, which stays; nodes go at the end,
  // so the uses found up front stay right.
  std::vector<bool> erased(graph.nodes.size(), false);
  int64_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (erased[i]) continue;
    const std::optional<Unit> unit = unitAround(graph, scope, uses, i);
    if (!unit) continue;
    ir::Node& op = graph.nodes[i];
    const Quantization &x = unit->dqs[0], &w = unit->dqs[1];
    std::vector<std::string> inputs = {x.node->inputs[0],         x.node->inputs[1],
                                       zeroPointInput(graph, x),  w.node->inputs[0],
                                       w.node->inputs[1],         zeroPointInput(graph, w),
                                       unit->out.node->inputs[1], zeroPointInput(graph, unit->out)};
    if (unit->dqs.size() == 3) inputs.push_back(unit->dqs[2].node->inputs[0]);
    for (size_t k = 0; k < unit->dqAt.size(); ++k) {
      // A DequantizeLinear that others read stays for them (onnxruntime gives this unit its own copy).
      if (!uses.readOnlyOnce(op.inputs[k])) continue;
      graph.valueInfo.erase(op.inputs[k]);
      erased[unit->dqAt[k]] = true;
    }
    erased[unit->q] = true;
    graph.valueInfo.erase(op.outputs[0]);
    op.opType = op.opType == "Conv" ? "QLinearConv" : "QLinearMatMul";
    op.inputs = std::move(inputs);
    op.outputs[0] = graph.nodes[unit->q].outputs[0];
    ++fused;
  }
  if (fused == 0) return 0;
  std::vector<ir::Node> remaining;
  remaining.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!erased[i]) remaining.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(remaining);
  return fused;
}

// `enclosing`: the graphs around `graph`, innermost first.
int64_t fuseInScope(ir::Graph& graph, const std::vector<const ir::Graph*>& enclosing) {
  int64_t fused = fuseInGraph(graph, enclosing);
  std::vector<const ir::Graph*> inner = {&graph};
  inner.insert(inner.end(), enclosing.begin(), enclosing.end());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "",
                    [&](ir::Graph& body, const std::string&) { fused += fuseInScope(body, inner); });
  }
  return fused;
}

}  // namespace

int64_t fuseQdqNodeUnits(ir::Graph& graph) { return fuseInScope(graph, {}); }

}  // namespace kiln::optimizer
