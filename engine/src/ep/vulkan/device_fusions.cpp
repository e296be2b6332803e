#include "ep/vulkan/device_fusions.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "ep/vulkan/float16_storage.h"
#include "ep/vulkan/kernels/elementwise.h"
#include "ep/vulkan/vk_kernel.h"

namespace kiln::vk {
namespace {

// How many nodes read each value.
std::map<std::string, int> readerCounts(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  for (const auto& node : graph.nodes) {
    for (const auto& in : node.inputs) {
      if (!in.empty()) ++counts[in];
    }
  }
  return counts;
}

// The single reader of `value`, or -1.
int soleReader(const ir::Graph& graph, const std::string& value) {
  int found = -1;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& in : graph.nodes[i].inputs) {
      if (in != value) continue;
      if (found >= 0 && found != static_cast<int>(i)) return -1;
      found = static_cast<int>(i);
    }
  }
  return found;
}

// A float32 or float16 initializer as float32 (float16 widened), or nullopt.
std::optional<Tensor> floatInitializer(const ir::Graph& graph, const std::string& name) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end()) return std::nullopt;
  if (it->second.dtype() == DataType::FLOAT) return it->second;
  if (it->second.dtype() == DataType::FLOAT16) return toFloat32(it->second);
  return std::nullopt;
}

}  // namespace

namespace {

// Folds bn (y = (x - mean) / sqrt(var + eps) * scale + b) into conv's weights and bias, in float32; float16 weights
// are widened first and the folded ones stored as float16 again.
bool foldBatchNorm(ir::Graph& graph, ir::Node& conv, const ir::Node& bn) {
  if (bn.inputs.size() < 5 || bn.outputs.size() != 1 || bn.attrInt("training_mode", 0) != 0) return false;
  if (conv.inputs.size() < 2 || !graph.isInitializer(conv.inputs[1])) return false;
  const DataType storage = graph.initializers.at(conv.inputs[1]).dtype();
  const std::optional<Tensor> w = floatInitializer(graph, conv.inputs[1]);
  const std::optional<Tensor> scale = floatInitializer(graph, bn.inputs[1]);
  const std::optional<Tensor> shift = floatInitializer(graph, bn.inputs[2]);
  const std::optional<Tensor> mean = floatInitializer(graph, bn.inputs[3]);
  const std::optional<Tensor> var = floatInitializer(graph, bn.inputs[4]);
  if (!w || !scale || !shift || !mean || !var || w->rank() < 3) return false;
  std::optional<Tensor> bias;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    bias = floatInitializer(graph, conv.inputs[2]);
    if (!bias) return false;
  }
  auto folded = ops::foldBatchNormParameters(*w, bias, *scale, *shift, *mean, *var, bn.attrFloat("epsilon", 1e-5f),
                                        conv.opType == "ConvTranspose", conv.attrInt("group", 1));
  if (!folded) return false;
  auto& [newW, newB] = *folded;
  const std::string wName = conv.inputs[1] + "/bn_folded:" + bn.outputs[0];
  const std::string bName = bn.outputs[0] + "/bn_folded_bias";
  graph.initializers[wName] = storage == DataType::FLOAT16 ? toFloat16(newW) : std::move(newW);
  graph.initializers[bName] = storage == DataType::FLOAT16 ? toFloat16(newB) : std::move(newB);
  conv.inputs.resize(3);
  conv.inputs[1] = wName;
  conv.inputs[2] = bName;
  conv.outputs[0] = bn.outputs[0];
  return true;
}

// Maps an activation node to the conv attributes, or false when it is not fusable.
bool activationAttributes(const ir::Node& act, const ir::Graph& graph, std::string& kind, std::vector<float>& params) {
  if (act.opType == "Relu") {
    kind = "Relu";
  } else if (act.opType == "Sigmoid") {
    kind = "Sigmoid";
  } else if (act.opType == "HardSwish") {
    kind = "HardSwish";
  } else if (act.opType == "LeakyRelu") {
    kind = "LeakyRelu";
    params = {act.attrFloat("alpha", 0.01f)};
  } else if (act.opType == "HardSigmoid") {
    kind = "HardSigmoid";
    params = {act.attrFloat("alpha", 0.2f), act.attrFloat("beta", 0.5f)};
  } else if (act.opType == "Clip") {
    float low = -INFINITY, high = INFINITY;
    if (act.hasAttribute("min") || act.hasAttribute("max")) {
      low = act.attrFloat("min", low);
      high = act.attrFloat("max", high);
    }
    for (size_t i = 1; i < act.inputs.size() && i < 3; ++i) {
      if (act.inputs[i].empty()) continue;
      const std::optional<Tensor> bound = floatInitializer(graph, act.inputs[i]);
      if (!bound || bound->numel() != 1) return false;
      (i == 1 ? low : high) = bound->data<float>()[0];
    }
    kind = "Clip";
    params = {low, high};
  } else {
    return false;
  }
  return true;
}

}  // namespace

FusionStats applyDeviceFusions(ir::Graph& graph, const std::vector<std::string>& keep, bool fuseActivations) {
  FusionStats stats;
  const std::set<std::string> visible(keep.begin(), keep.end());
  std::set<size_t> removed;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node& conv = graph.nodes[i];
    if ((conv.opType != "Conv" && conv.opType != "ConvTranspose") || !conv.domain.empty() || conv.outputs.size() != 1) {
      continue;
    }
    for (int round = 0; round < 2; ++round) {
      const std::string out = conv.outputs[0];
      if (visible.count(out)) break;
      const int reader = soleReader(graph, out);
      if (reader < 0 || removed.count(static_cast<size_t>(reader))) break;
      const ir::Node& next = graph.nodes[static_cast<size_t>(reader)];
      if (!next.domain.empty() || next.inputs.empty() || next.inputs[0] != out) break;
      if (next.opType == "BatchNormalization" && !conv.hasAttribute("kiln_activation") && foldBatchNorm(graph, conv, next)) {
        ++stats.batchNormsFolded;
      } else {
        std::string kind;
        std::vector<float> params;
        // Only Conv's kernel applies kiln_activation (ConvTranspose's does not).
        if (!fuseActivations || conv.opType != "Conv" || conv.hasAttribute("kiln_activation") ||
            !activationAttributes(next, graph, kind, params)) {
          break;
        }
        ir::Attribute a;
        a.name = "kiln_activation";
        a.type = ir::AttributeType::STRING;
        a.s = kind;
        conv.attributes[a.name] = a;
        ir::Attribute p;
        p.name = "kiln_activation_params";
        p.type = ir::AttributeType::FLOATS;
        p.floats = params;
        conv.attributes[p.name] = p;
        conv.outputs[0] = next.outputs[0];
        ++stats.activationsFused;
      }
      removed.insert(static_cast<size_t>(reader));
    }
  }
  if (removed.empty()) return stats;
  std::vector<ir::Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!removed.count(i)) kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
  // Drop initializers nothing reads any more (the unfolded weights and BN parameters).
  const auto readers = readerCounts(graph);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    it = readers.count(it->first) ? std::next(it) : graph.initializers.erase(it);
  }
  return stats;
}

}  // namespace kiln::vk

namespace kiln::vk {
namespace {

// Grows one fused chain backwards from a sink node.
class ChainBuilder {
 public:
  ChainBuilder(const ir::Graph& graph, int64_t opset, const std::set<std::string>& keep,
               const std::map<std::string, int>& readers, const std::map<std::string, size_t>& producer,
               const std::set<size_t>& unavailable)
      : graph_(graph), opset_(opset), keep_(keep), readers_(readers), producer_(producer), unavailable_(unavailable) {}

  struct State {
    std::string external;        // the one tensor the chain reads ("" until seen)
    std::vector<size_t> members;  // nodes inlined so far
    std::string functions;
    int next = 0;
  };

  // At most this many nodes in one chain: the builder recurses once per node and glslang parses the nested calls
  // recursively, so a model's 20,000-node chain becomes many fused nodes, not a stack overflow.
  static constexpr int kMaxChainNodes = 64;

  // The GLSL expression for `node`'s output given the state, or nullopt when it cannot be expressed. `depth`: the
  // nodes between `index` and the chain's sink.
  std::optional<std::string> nodeExpression(size_t index, State& state, int depth = 0) const {
    const ir::Node& node = graph_.nodes[index];
    const std::string name = "f" + std::to_string(state.next++);
    auto op = fusableElementwise(node, opset_, graph_, name);
    if (!op) return std::nullopt;
    std::vector<std::string> args;
    for (size_t i = 0; i < op->arity; ++i) {
      auto arg = valueExpression(node.inputs[i], state, depth);
      if (!arg) return std::nullopt;
      args.push_back(*arg);
    }
    state.functions += op->function + " ";
    return name + "(" + args[0] + (op->arity == 2 ? ", " + args[1] : std::string()) + ")";
  }

 private:
  std::optional<std::string> valueExpression(const std::string& value, State& state, int depth) const {
    if (auto init = graph_.initializers.find(value); init != graph_.initializers.end()) {
      const DataType type = init->second.dtype();
      if ((type == DataType::FLOAT || type == DataType::FLOAT16) && init->second.numel() == 1) {
        return glslFloat(type == DataType::FLOAT ? init->second.data<float>()[0]
                                                 : float(init->second.data<Float16>()[0]));
      }
      return external(value, state);
    }
    auto producer = producer_.find(value);
    auto readers = readers_.find(value);
    if (producer != producer_.end() && !keep_.count(value) && readers != readers_.end() && readers->second == 1 &&
        !unavailable_.count(producer->second) && depth + 1 < kMaxChainNodes) {
      State trial = state;
      if (auto expression = nodeExpression(producer->second, trial, depth + 1)) {
        trial.members.push_back(producer->second);
        state = std::move(trial);
        return expression;
      }
    }
    return external(value, state);
  }

  static std::optional<std::string> external(const std::string& value, State& state) {
    if (state.external.empty()) state.external = value;
    if (state.external != value) return std::nullopt;
    return std::string("v");
  }

  const ir::Graph& graph_;
  int64_t opset_;
  const std::set<std::string>& keep_;
  const std::map<std::string, int>& readers_;
  const std::map<std::string, size_t>& producer_;
  const std::set<size_t>& unavailable_;
};

// The float type (float32, or float16: the fused kernel stores either) of a tensor value, else UNDEFINED.
DataType floatTypeOf(const ir::Graph& graph, const std::string& value) {
  DataType type = DataType::UNDEFINED;
  if (auto init = graph.initializers.find(value); init != graph.initializers.end()) {
    type = init->second.dtype();
  } else if (const ir::ValueInfo* info = graph.findValueInfo(value); info && info->kind == ir::ValueKind::TENSOR) {
    type = info->dtype;
  }
  return type == DataType::FLOAT || type == DataType::FLOAT16 ? type : DataType::UNDEFINED;
}

}  // namespace

void fuseElementwiseChains(ir::Graph& graph, const std::vector<std::string>& keep, int64_t opset,
                           const std::vector<bool>& onDevice, FusionStats& stats) {
  const std::set<std::string> visible(keep.begin(), keep.end());
  const auto readers = readerCounts(graph);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) producer[out] = i;
  }
  // Nodes evaluated on the host (shape arithmetic) stay as they are: their results must stay host values.
  // `unavailable` holds them and the nodes already fused; `absorbed` only the fused ones (removed below).
  std::set<size_t> unavailable, absorbed;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (i >= onDevice.size() || !onDevice[i]) unavailable.insert(i);
  }
  std::map<size_t, ir::Node> replacements;  // sink index -> fused node
  for (size_t sink = graph.nodes.size(); sink-- > 0;) {
    if (unavailable.count(sink) || graph.nodes[sink].outputs.size() != 1) continue;
    const DataType type = floatTypeOf(graph, graph.nodes[sink].outputs[0]);
    if (type == DataType::UNDEFINED) continue;
    ChainBuilder builder(graph, opset, visible, readers, producer, unavailable);
    ChainBuilder::State state;
    auto expression = builder.nodeExpression(sink, state);
    if (!expression || state.members.empty() || state.external.empty() || floatTypeOf(graph, state.external) != type) {
      continue;
    }
    ir::Node fused;
    fused.name = graph.nodes[sink].name.empty() ? "fused_" + graph.nodes[sink].outputs[0] : graph.nodes[sink].name;
    fused.opType = "FusedElementwise";
    fused.domain = kKilnDomain;
    fused.inputs = {state.external};
    fused.outputs = graph.nodes[sink].outputs;
    ir::Attribute functions;
    functions.name = "kiln_functions";
    functions.type = ir::AttributeType::STRING;
    functions.s = state.functions;
    ir::Attribute body;
    body.name = "kiln_expression";
    body.type = ir::AttributeType::STRING;
    body.s = *expression;
    fused.attributes[functions.name] = functions;
    fused.attributes[body.name] = body;
    std::string chain;
    for (size_t m : state.members) chain += graph.nodes[m].opType + "+";
    fused.attributes["kiln_fused_ops"] = {"kiln_fused_ops", ir::AttributeType::STRING, 0, 0, chain + graph.nodes[sink].opType};
    for (size_t m : state.members) absorbed.insert(m), unavailable.insert(m);
    absorbed.insert(sink);
    unavailable.insert(sink);
    replacements[sink] = std::move(fused);
    ++stats.elementwiseChains;
    stats.elementwiseNodesFused += static_cast<int>(state.members.size()) + 1;
  }
  if (replacements.empty()) return;
  std::vector<ir::Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (auto r = replacements.find(i); r != replacements.end()) {
      nodes.push_back(std::move(r->second));
    } else if (!absorbed.count(i)) {
      nodes.push_back(std::move(graph.nodes[i]));
    }
  }
  graph.nodes = std::move(nodes);
  const auto stillRead = readerCounts(graph);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    it = stillRead.count(it->first) ? std::next(it) : graph.initializers.erase(it);
  }
}

}  // namespace kiln::vk
