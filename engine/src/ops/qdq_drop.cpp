#include "ops/qdq_drop.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "ir/graph_paths.h"
#include "ir/scope_chain.h"

namespace kiln::ops {
namespace {

// Ops that only reinterpret the shape: no element moves, so they need no 8-bit storage on a device.
bool isViewOp(const std::string& op) {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return ops.count(op) != 0;
}

// Ops that copy or select elements of input 0 (Concat: of every input) without looking at their values.
bool isCopyOp(const std::string& op) {
  static const std::set<std::string> ops = {"Transpose",      "Slice",        "Expand", "Tile",
                                            "DepthToSpace",   "SpaceToDepth", "Concat", "Gather",
                                            "GatherElements", "Pad",          "Resize"};
  return ops.count(op) != 0;
}

// Resize copies elements only in nearest mode without tf_crop_and_resize's float extrapolation value.
bool resizeCopies(const ir::Node& node) {
  return node.attrString("mode", "nearest") == "nearest" &&
         node.attrString("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
}

// MaxPool commutes with a dequantization whose scale is positive (it is then non-decreasing), and an empty
// window's lowest float quantizes to the type's lowest, which the 8-bit MaxPool writes: exact where both EPs
// run it on 8-bit data (1-D and 2-D windows, no Indices output).
bool isExactMaxPool(const ir::Node& node) {
  if (node.opType != "MaxPool" || node.outputs.size() != 1) return false;
  const size_t spatial = node.attrInts("kernel_shape").size();
  return spatial == 1 || spatial == 2;
}

// The first opset whose version of `op` takes 8-bit data (0: every opset that has QuantizeLinear).
int64_t firstEightBitOpset(const std::string& op) {
  if (op == "MaxPool") return 12;
  if (op == "Pad") return 11;
  return 0;
}

// The producer of each value, how many nodes (or bodies) read it, and the first node reading it as input 0.
struct Uses {
  std::map<std::string, size_t> producer;
  std::map<std::string, int> readers;
  std::map<std::string, size_t> firstReader;

  int readersOf(const std::string& value) const {
    auto it = readers.find(value);
    return it == readers.end() ? 0 : it->second;
  }
};

Uses usesOf(const ir::Graph& graph) {
  Uses uses;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    for (const auto& out : node.outputs) uses.producer[out] = i;
    if (!node.inputs.empty() && !node.inputs[0].empty()) uses.firstReader.emplace(node.inputs[0], i);
    for (const auto& in : node.inputs) {
      if (!in.empty()) ++uses.readers[in];
    }
    if (ir::hasSubgraphs(node)) {
      for (const auto& in : graph.implicitInputs(node)) ++uses.readers[in];
    }
  }
  return uses;
}

// Input i of `node` when present, else "".
std::string inputOf(const ir::Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : std::string();
}

// The one-element constant initializer `name` that `scope`'s graph reads (not one a caller may override as a
// graph input), or nullptr.
const Tensor* scalarConstant(const ir::ScopeChain& scope, const std::string& name) {
  const ir::Graph* g = scope.initializerOwner(name);
  if (!g) return nullptr;
  const Tensor& value = g->initializers.at(name);
  const bool fed =
      std::any_of(g->inputs.begin(), g->inputs.end(), [&](const auto& in) { return in.name == name; });
  return !fed && value.numel() == 1 && value.rank() <= 1 ? &value : nullptr;
}

// Whether a scale makes quantize(dequantize(k)) == k for every 8-bit k (see the header).
bool exactScale(const Tensor& scale) {
  if (scale.dtype() != DataType::FLOAT) return false;
  const float s = std::fabs(scale.data<float>()[0]);
  return std::isnormal(s) && std::isfinite(s * 255.0f);
}

bool sameScalar(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && std::memcmp(a.rawData(), b.rawData(), dataTypeSize(a.dtype())) == 0;
}

// Whether DequantizeLinear `dq` and QuantizeLinear `q` use the same constant per-tensor scale and zero point,
// and the 8-bit type dq reads is the one q writes.
bool sameParameters(const ir::ScopeChain& scope, const ir::Node& dq, const ir::Node& q) {
  if (dq.attrInt("block_size", 0) != 0 || q.attrInt("block_size", 0) != 0) return false;
  const Tensor* s1 = scalarConstant(scope, inputOf(dq, 1));
  const Tensor* s2 = scalarConstant(scope, inputOf(q, 1));
  if (!s1 || !s2 || !exactScale(*s1) || !sameScalar(*s1, *s2)) return false;
  const std::string z1 = inputOf(dq, 2), z2 = inputOf(q, 2);
  const DataType quantized = scope.typeOf(inputOf(dq, 0));
  if (quantized != DataType::UINT8 && quantized != DataType::INT8) return false;
  if (z1.empty() || z2.empty()) {
    return z1.empty() && z2.empty() && quantized == DataType::UINT8 && !q.hasAttribute("output_dtype");
  }
  const Tensor* zp1 = scalarConstant(scope, z1);
  const Tensor* zp2 = scalarConstant(scope, z2);
  return zp1 && zp2 && zp1->dtype() == quantized && sameScalar(*zp1, *zp2);
}

// The inputs of `op` that carry dequantized data.
std::vector<size_t> dataInputs(const ir::Node& op) {
  if (op.opType != "Concat") return {0};
  std::vector<size_t> all(op.inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

// A constant Pad pads with 0 unless its constant_value (input 2) says otherwise: only 0 stays exact, as the
// zero point. Other modes copy elements.
bool padsWithZero(const ir::ScopeChain& scope, const ir::Node& pad) {
  if (pad.attrString("mode", "constant") != "constant") return true;
  const std::string value = inputOf(pad, 2);
  if (value.empty()) return true;
  const Tensor* constant = scalarConstant(scope, value);
  return constant && constant->dtype() == DataType::FLOAT && constant->data<float>()[0] == 0.0f;
}

// The zero point of `dq` as an initializer name, adding uint8 0 for an omitted one.
std::string zeroPointName(ir::Graph& graph, const ir::Node& dq) {
  std::string name = inputOf(dq, 2);
  if (!name.empty()) return name;
  name = dq.inputs[0] + "_zero_point";
  while (graph.initializers.count(name) || graph.findValueInfo(name)) name += "_";
  graph.initializers[name] = Tensor::fromVector<uint8_t>({}, {0});
  return name;
}

// The chain around graph.nodes[at] when it is exact under `policy`: the DequantizeLinear node of each data
// input and the QuantizeLinear node reading the output. Empty `dqs` when it is not.
struct Chain {
  std::vector<size_t> dqs;
  std::vector<bool> dqGoes;  // per entry of dqs: nothing else reads its output, so the node goes too
  size_t q = 0;
};

Chain exactChainAround(const ir::Graph& graph, const ir::ScopeChain& scope, size_t at, const Uses& uses,
                       const std::set<std::string>& kept, const QdqDropPolicy& policy) {
  const ir::Node& op = graph.nodes[at];
  const bool pool = policy.moveBytes && isExactMaxPool(op);
  if (!op.domain.empty() || !(isViewOp(op.opType) || (policy.moveBytes && isCopyOp(op.opType)) || pool))
    return {};
  if (policy.opset > 0 && policy.opset < firstEightBitOpset(op.opType)) return {};
  if (op.opType == "Pad" && policy.opset < 11) return {};  // older Pads take the value as a float attribute
  if (op.inputs.empty() || op.outputs.size() != 1 || ir::hasSubgraphs(op)) return {};
  const std::string& moved = op.outputs[0];
  if (kept.count(moved) || uses.readersOf(moved) != 1) return {};
  Chain chain;
  auto reader = uses.firstReader.find(moved);
  if (reader == uses.firstReader.end() || reader->second <= at) return {};
  chain.q = reader->second;
  const ir::Node& q = graph.nodes[chain.q];
  if (!q.domain.empty() || q.opType != "QuantizeLinear" || q.outputs.size() != 1) return {};
  std::vector<size_t> dqs;
  for (size_t i : dataInputs(op)) {
    const std::string& dequantized = op.inputs[i];
    auto dqAt = uses.producer.find(dequantized);
    if (dequantized.empty() || dqAt == uses.producer.end() || scope.typeOf(dequantized) != DataType::FLOAT)
      return {};
    const ir::Node& dq = graph.nodes[dqAt->second];
    if (!dq.domain.empty() || dq.opType != "DequantizeLinear" || dq.outputs.size() != 1) return {};
    if (!sameParameters(scope, dq, q)) return {};
    if (pool && !(scalarConstant(scope, dq.inputs[1])->data<float>()[0] > 0)) return {};
    dqs.push_back(dqAt->second);
    // A DequantizeLinear that other nodes (or the graph) read stays for them: onnxruntime gives each consumer
    // its own DequantizeLinear (EnsureUniqueDQForNodeUnit) before dropping this one.
    chain.dqGoes.push_back(uses.readersOf(dequantized) == 1 && !kept.count(dequantized));
  }
  if (op.opType == "Pad" && !padsWithZero(scope, op)) return {};
  if (op.opType == "Resize" && !resizeCopies(op)) return {};
  chain.dqs = std::move(dqs);
  return chain;
}

}  // namespace

int64_t dropExactQdqPairs(ir::Graph& graph, const QdqDropPolicy& policy) {
  std::set<std::string> kept(policy.keep.begin(), policy.keep.end());
  for (const auto& out : graph.outputs) kept.insert(out.name);
  // One pass: chains share no nodes (a kept DequantizeLinear aside, which no chain erases while another reads
  // it), so the uses found up front stay right for the chains not yet rewritten; nodes go at the end.
  const Uses uses = usesOf(graph);
  const ir::ScopeChain scope(graph, policy.enclosing);
  std::vector<bool> erased(graph.nodes.size(), false);
  int64_t rewritten = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (erased[i]) continue;
    const Chain chain = exactChainAround(graph, scope, i, uses, kept, policy);
    if (chain.dqs.empty()) continue;
    ir::Node& op = graph.nodes[i];
    const std::vector<size_t> inputs = dataInputs(op);
    erased[chain.q] = true;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const ir::Node& dq = graph.nodes[chain.dqs[k]];
      if (chain.dqGoes[k]) {
        graph.valueInfo.erase(op.inputs[inputs[k]]);
        erased[chain.dqs[k]] = true;
      }
      op.inputs[inputs[k]] = dq.inputs[0];
    }
    if (op.opType == "Pad" && op.attrString("mode", "constant") == "constant") {
      // The zero pad dequantizes from the zero point; opset >= 11 Pads take the value as input 2.
      if (op.inputs.size() < 3) op.inputs.resize(3);
      op.inputs[2] = zeroPointName(graph, graph.nodes[chain.dqs[0]]);
    }
    graph.valueInfo.erase(op.outputs[0]);
    op.outputs[0] = graph.nodes[chain.q].outputs[0];
    ++rewritten;
  }
  if (rewritten == 0) return 0;
  std::vector<ir::Node> remaining;
  remaining.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!erased[i]) remaining.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(remaining);
  return rewritten;
}

}  // namespace kiln::ops
