#include "ep/vulkan/float16_storage.h"

#include <cmath>
#include <map>
#include <set>

#include "ir/cast_rewriter.h"

namespace kiln::vk {
namespace {

// Ops whose float outputs take their type from an attribute, not from their inputs: they keep float32.
bool typeFromAttribute(const ir::Node& node) {
  static const std::set<std::string> ops = {"Cast", "CastLike", "Constant", "ConstantOfShape", "EyeLike",
                                            "RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli"};
  return !node.domain.empty() ? false : ops.count(node.opType) != 0;
}

// Float inputs that are not the node's data type T and keep float32: Resize's roi and scales, Upsample's scales
// (rounding a scale to float16 could change the output shape).
bool keepsType(const ir::Node& node, size_t input) {
  if (!node.domain.empty()) return false;
  return (node.opType == "Resize" && input >= 1) || (node.opType == "Upsample" && input == 1);
}

// Whether float16 holds a float32 constant without overflow (a finite |x| > 65504 would become infinity).
// Subnormal values (below 2^-14) lose relative precision but are kept: on PP-OCRv4 det, keeping the layers whose
// folded weights are mostly subnormal in float32 changed the accuracy by nothing measurable and cost 0.17x of size.
bool fitsFloat16(const Tensor& t) {
  constexpr float kMaxHalf = 65504.0f;
  const float* values = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (std::isfinite(values[i]) && std::fabs(values[i]) > kMaxHalf) return false;
  }
  return true;
}

DataType typeOf(const ir::Graph& graph, const std::string& value) {
  if (auto init = graph.initializers.find(value); init != graph.initializers.end()) return init->second.dtype();
  const ir::ValueInfo* info = graph.findValueInfo(value);
  return info ? info->dtype : DataType::UNDEFINED;
}

// `graph` with every float32 value and initializer made float16 (what the claims are asked about).
ir::Graph allFloat16(const ir::Graph& graph) {
  ir::Graph half = graph;
  for (auto& [name, tensor] : half.initializers) {
    if (tensor.dtype() == DataType::FLOAT) tensor = toFloat16(tensor);
  }
  auto convert = [](ir::ValueInfo& info) {
    if (info.dtype == DataType::FLOAT) info.dtype = DataType::FLOAT16;
  };
  for (auto& [name, info] : half.valueInfo) convert(info);
  for (auto& info : half.inputs) convert(info);
  for (auto& info : half.outputs) convert(info);
  return half;
}

// Float values converted from integers by a Cast (ConvInteger/MatMulInteger accumulators before their dequantizing
// Mul): their magnitude is not bounded by anything float16 holds, so their readers keep float32.
std::set<std::string> floatsFromIntegers(const ir::Graph& graph) {
  std::set<std::string> values;
  for (const ir::Node& node : graph.nodes) {
    if (!node.domain.empty() || node.opType != "Cast" || node.inputs.empty() || node.outputs.empty()) continue;
    const DataType from = typeOf(graph, node.inputs[0]);
    if (from != DataType::FLOAT && from != DataType::FLOAT16 && from != DataType::DOUBLE &&
        from != DataType::BFLOAT16 && from != DataType::UNDEFINED && from != DataType::BOOL) {
      values.insert(node.outputs[0]);
    }
  }
  return values;
}

// Which nodes store float16: claimed by a float16 kernel, typed by their inputs, touching a float32 value, with
// every value's type known (a kernel picks its storage from its inputs' declared types), constants that fit and no
// float input converted from integers.
std::vector<bool> float16Nodes(const ir::Graph& graph, const std::vector<bool>& claimed) {
  std::vector<bool> result(graph.nodes.size(), false);
  const std::set<std::string> fromIntegers = floatsFromIntegers(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (i >= claimed.size() || !claimed[i] || typeFromAttribute(node)) continue;
    bool known = true, touchesFloat = false, fits = true;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k].empty()) continue;
      const DataType type = typeOf(graph, node.inputs[k]);
      known = known && type != DataType::UNDEFINED;
      if (type != DataType::FLOAT || keepsType(node, k)) continue;
      touchesFloat = true;
      fits = fits && !fromIntegers.count(node.inputs[k]);
      auto init = graph.initializers.find(node.inputs[k]);
      fits = fits && (init == graph.initializers.end() || fitsFloat16(init->second));
    }
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      const DataType type = typeOf(graph, out);
      known = known && type != DataType::UNDEFINED;
      touchesFloat = touchesFloat || type == DataType::FLOAT;
    }
    result[i] = known && touchesFloat && fits;
  }
  return result;
}

}  // namespace

Float16StorageStats storeFloatsAsFloat16(ir::Graph& graph, const std::vector<std::string>& outputs,
                                         const Float16Claims& claims) {
  Float16StorageStats stats;
  const std::vector<bool> half = float16Nodes(graph, claims(allFloat16(graph)));
  std::map<std::string, DataType> original;  // every value's type before the rewrite
  for (const auto& node : graph.nodes) {
    for (const auto& name : node.inputs) original.emplace(name, typeOf(graph, name));
    for (const auto& name : node.outputs) original.emplace(name, typeOf(graph, name));
  }
  const std::set<std::string> partitionOutputs(outputs.begin(), outputs.end());
  // Each float32 value gets a float16 and/or float32 name on demand.
  ir::CastRewriter rewriter(graph, DataType::FLOAT16, {"kiln_fp16_storage_cast_", "_kiln_fp16", "_kiln_fp32"});

  // Float32 initializers: float16 in place when every reader takes float16, a float16 copy beside them when some do.
  std::map<std::string, std::pair<bool, bool>> readers;  // initializer -> (a float16 reader, a float32 reader)
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      auto init = graph.initializers.find(node.inputs[k]);
      if (init == graph.initializers.end() || init->second.dtype() != DataType::FLOAT) continue;
      auto& [wants16, wants32] = readers[node.inputs[k]];
      (half[i] && !keepsType(node, k) ? wants16 : wants32) = true;
    }
  }
  for (const auto& [name, wants] : readers) {
    Tensor& tensor = graph.initializers.at(name);
    if (!wants.first) continue;
    stats.initializers++;
    if (!wants.second) {
      tensor = toFloat16(tensor);
      if (auto info = graph.valueInfo.find(name); info != graph.valueInfo.end()) info->second.dtype = DataType::FLOAT16;
      rewriter.setName(name, DataType::FLOAT16, name);
    } else {
      graph.initializers[name + "_kiln_fp16"] = toFloat16(tensor);
      rewriter.setName(name, DataType::FLOAT16, name + "_kiln_fp16");
      rewriter.setName(name, DataType::FLOAT, name);
    }
  }

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node node = graph.nodes[i];
    const DataType storage = half[i] ? DataType::FLOAT16 : DataType::FLOAT;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k].empty() || original[node.inputs[k]] != DataType::FLOAT) continue;
      node.inputs[k] = rewriter.resolve(node.inputs[k], keepsType(node, k) ? DataType::FLOAT : storage);
    }
    std::vector<std::pair<std::string, std::string>> exits;  // (float16 name, partition output) to cast back
    for (auto& out : node.outputs) {
      if (out.empty() || original[out] != DataType::FLOAT || !half[i]) continue;
      if (partitionOutputs.count(out)) {
        const std::string renamed = out + "_kiln_fp16";
        rewriter.addValue(renamed, out, DataType::FLOAT16);
        rewriter.setName(out, DataType::FLOAT16, renamed);
        rewriter.setName(out, DataType::FLOAT, out);
        exits.emplace_back(renamed, out);
        out = renamed;
      } else {
        graph.valueInfo[out].name = out;
        graph.valueInfo[out].dtype = DataType::FLOAT16;
        rewriter.setName(out, DataType::FLOAT16, out);
      }
    }
    if (half[i]) stats.nodes++;
    rewriter.append(std::move(node));
    for (const auto& [from, to] : exits) rewriter.emitCast(from, to, DataType::FLOAT);
  }
  graph.nodes = rewriter.takeNodes();
  stats.casts = rewriter.casts();
  return stats;
}

}  // namespace kiln::vk
