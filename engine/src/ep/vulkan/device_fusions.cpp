#include "ep/vulkan/device_fusions.h"

#include <cmath>
#include <map>
#include <set>

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

const Tensor* floatInitializer(const ir::Graph& graph, const std::string& name) {
  auto it = graph.initializers.find(name);
  return it != graph.initializers.end() && it->second.dtype() == DataType::FLOAT ? &it->second : nullptr;
}

// Folds bn (y = (x - mean) / sqrt(var + eps) * scale + b) into conv's weights and bias.
bool foldBatchNorm(ir::Graph& graph, ir::Node& conv, const ir::Node& bn) {
  if (bn.inputs.size() < 5 || bn.outputs.size() != 1 || bn.attrInt("training_mode", 0) != 0) return false;
  const Tensor* w = conv.inputs.size() > 1 ? floatInitializer(graph, conv.inputs[1]) : nullptr;
  const Tensor* scale = floatInitializer(graph, bn.inputs[1]);
  const Tensor* shift = floatInitializer(graph, bn.inputs[2]);
  const Tensor* mean = floatInitializer(graph, bn.inputs[3]);
  const Tensor* var = floatInitializer(graph, bn.inputs[4]);
  if (!w || !scale || !shift || !mean || !var || w->rank() < 3) return false;
  const Tensor* bias = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? floatInitializer(graph, conv.inputs[2]) : nullptr;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !bias) return false;
  // Output channels: dim 0 for Conv; group * dim 1 for ConvTranspose.
  const bool transpose = conv.opType == "ConvTranspose";
  const int64_t group = conv.attrInt("group", 1);
  const int64_t channels = transpose ? w->dim(1) * group : w->dim(0);
  if (scale->numel() != channels || shift->numel() != channels || mean->numel() != channels || var->numel() != channels) {
    return false;
  }
  const float epsilon = bn.attrFloat("epsilon", 1e-5f);
  std::vector<float> factor(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    factor[static_cast<size_t>(c)] = scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + epsilon);
  }
  Tensor newW = w->clone();
  float* data = newW.data<float>();
  if (!transpose) {
    const int64_t per = w->numel() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < per; ++k) data[c * per + k] *= factor[static_cast<size_t>(c)];
    }
  } else {
    // Weight layout [C_in, C_out / group, k...]: output channel of (i, o) is (i / (C_in / group)) * (C_out/g) + o.
    const int64_t cin = w->dim(0), coutPerGroup = w->dim(1), kernel = w->numel() / (cin * coutPerGroup);
    const int64_t cinPerGroup = cin / group;
    for (int64_t i = 0; i < cin; ++i) {
      for (int64_t o = 0; o < coutPerGroup; ++o) {
        const int64_t c = (i / cinPerGroup) * coutPerGroup + o;
        for (int64_t k = 0; k < kernel; ++k) data[(i * coutPerGroup + o) * kernel + k] *= factor[static_cast<size_t>(c)];
      }
    }
  }
  Tensor newB(DataType::FLOAT, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    const float b0 = bias ? bias->data<float>()[c] : 0.0f;
    newB.data<float>()[c] = (b0 - mean->data<float>()[c]) * factor[static_cast<size_t>(c)] + shift->data<float>()[c];
  }
  const std::string wName = conv.inputs[1] + "/bn_folded:" + bn.outputs[0];
  const std::string bName = bn.outputs[0] + "/bn_folded_bias";
  graph.initializers[wName] = std::move(newW);
  graph.initializers[bName] = std::move(newB);
  conv.inputs.resize(3);
  conv.inputs[1] = wName;
  conv.inputs[2] = bName;
  conv.outputs[0] = bn.outputs[0];
  return true;
}

// Maps an activation node to the conv attributes, or false when it is not fusable.
bool activationAttributes(const ir::Node& act, const ir::Graph& graph, std::string& kind, std::vector<float>& params) {
  if (act.opType == "Relu") {
    kind = "relu";
  } else if (act.opType == "Sigmoid") {
    kind = "sigmoid";
  } else if (act.opType == "LeakyRelu") {
    kind = "leaky_relu";
    params = {act.attrFloat("alpha", 0.01f)};
  } else if (act.opType == "HardSigmoid") {
    kind = "hard_sigmoid";
    params = {act.attrFloat("alpha", 0.2f), act.attrFloat("beta", 0.5f)};
  } else if (act.opType == "Clip") {
    float low = -INFINITY, high = INFINITY;
    if (act.hasAttribute("min") || act.hasAttribute("max")) {
      low = act.attrFloat("min", low);
      high = act.attrFloat("max", high);
    }
    for (size_t i = 1; i < act.inputs.size() && i < 3; ++i) {
      if (act.inputs[i].empty()) continue;
      const Tensor* bound = floatInitializer(graph, act.inputs[i]);
      if (!bound || bound->numel() != 1) return false;
      (i == 1 ? low : high) = bound->data<float>()[0];
    }
    kind = "clip";
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
        if (!fuseActivations || conv.hasAttribute("kiln_activation") || !activationAttributes(next, graph, kind, params)) {
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
