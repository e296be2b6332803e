#include "ep/cpu/float16_compute.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ep/cpu/kernels/half_convert.h"
#include "ir/cast_rewriter.h"

namespace kiln::cpu {
namespace {

constexpr int kAllInputs = -1;

// ai.onnx ops whose semantics are the same for every float type T and whose CPU kernels compute half types by
// widening to float: the inputs of type T (kAllInputs, or the listed positions; the others keep their types, e.g.
// Resize's roi and scales). Their half outputs are all of type T. Ops with a type attribute (Cast, RandomNormal, ...)
// or outputs typed otherwise are not here, nor is anything unsure.
const std::map<std::string, std::vector<int>>& typeGenericOps() {
  static const std::map<std::string, std::vector<int>> ops = {
      {"Conv", {kAllInputs}}, {"ConvTranspose", {kAllInputs}}, {"Add", {kAllInputs}}, {"Sub", {kAllInputs}},
      {"Mul", {kAllInputs}}, {"Div", {kAllInputs}}, {"Concat", {kAllInputs}}, {"Sum", {kAllInputs}},
      {"Max", {kAllInputs}}, {"Min", {kAllInputs}}, {"Mean", {kAllInputs}}, {"PRelu", {kAllInputs}},
      {"Clip", {kAllInputs}}, {"BatchNormalization", {kAllInputs}}, {"InstanceNormalization", {kAllInputs}},
      {"MatMul", {kAllInputs}}, {"Gemm", {kAllInputs}}, {"Relu", {0}}, {"Sigmoid", {0}}, {"Tanh", {0}},
      {"LeakyRelu", {0}}, {"Elu", {0}}, {"HardSigmoid", {0}}, {"HardSwish", {0}}, {"Softplus", {0}},
      {"Neg", {0}}, {"Abs", {0}}, {"Exp", {0}}, {"Sqrt", {0}}, {"Reciprocal", {0}}, {"Erf", {0}},
      {"MaxPool", {0}}, {"AveragePool", {0}}, {"GlobalAveragePool", {0}}, {"GlobalMaxPool", {0}},
      {"Softmax", {0}}, {"Resize", {0}}, {"Upsample", {0}}, {"Slice", {0}}, {"Reshape", {0}},
      {"Transpose", {0}}, {"Flatten", {0}}, {"Squeeze", {0}}, {"Unsqueeze", {0}}, {"Identity", {0}},
      {"Expand", {0}}, {"Tile", {0}}, {"Gather", {0}}, {"Split", {0}}, {"DepthToSpace", {0}},
      {"SpaceToDepth", {0}}, {"Pad", {0, 2}}, {"Where", {1, 2}},
  };
  return ops;
}

// Float16 only: bfloat16 chains keep the kernels' own path, because the Cast kernel truncates float to bfloat16
// (ONNX's reference) where the kernels round to nearest, so edge Casts would change their results.
bool isHalf(DataType type) { return type == DataType::FLOAT16; }

// The element type of tensor `value`; UNDEFINED when unknown or not a tensor (Identity passes sequences through).
DataType typeOf(const ir::Graph& graph, const std::string& value) {
  if (auto init = graph.initializers.find(value); init != graph.initializers.end()) return init->second.dtype();
  const ir::ValueInfo* info = graph.findValueInfo(value);
  return info && info->kind == ValueKind::TENSOR ? info->dtype : DataType::UNDEFINED;
}

// Whether input `k` of `node` (an op of typeGenericOps()) is of the node's type T.
bool isTypeInput(const ir::Node& node, size_t k) {
  const std::vector<int>& positions = typeGenericOps().at(node.opType);
  if (positions.front() == kAllInputs) return true;
  for (int p : positions) {
    if (static_cast<size_t>(p) == k) return true;
  }
  return false;
}

// Whether `node` computes in float32: a type-generic op whose T inputs and half outputs all have one half type, with
// every input and output type known.
bool computesInFloat32(const ir::Graph& graph, const ir::Node& node) {
  if (!node.domain.empty() || !typeGenericOps().count(node.opType)) return false;
  DataType half = DataType::UNDEFINED;
  auto agrees = [&](DataType type) {
    if (!isHalf(type) || (half != DataType::UNDEFINED && type != half)) return false;
    half = type;
    return true;
  };
  bool anyInput = false;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k].empty()) continue;
    const DataType type = typeOf(graph, node.inputs[k]);
    if (type == DataType::UNDEFINED) return false;
    if (!isTypeInput(node, k)) continue;
    if (!agrees(type)) return false;
    anyInput = true;
  }
  bool anyOutput = false;
  for (const auto& out : node.outputs) {
    if (out.empty()) continue;
    const DataType type = typeOf(graph, out);
    if (type == DataType::UNDEFINED) return false;
    if (!isHalf(type)) continue;
    if (!agrees(type)) return false;
    anyOutput = true;
  }
  return anyInput && anyOutput;
}

Tensor widened(const Tensor& t) {
  Tensor out(DataType::FLOAT, t.shape());
  halvesToFloats(t.data<Float16>(), out.data<float>(), t.numel());
  return out;
}

}  // namespace

bool hasFloat16ToCompute(const ir::Graph& graph) {
  for (const auto& node : graph.nodes) {
    if (computesInFloat32(graph, node)) return true;
  }
  return false;
}

Float16ComputeStats computeFloat16InFloat32(ir::Graph& graph) {
  Float16ComputeStats stats;
  std::vector<bool> widen(graph.nodes.size(), false);
  bool any = false;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    widen[i] = computesInFloat32(graph, graph.nodes[i]);
    any = any || widen[i];
  }
  if (!any) return stats;

  std::map<std::string, DataType> original;  // every half value's type before the rewrite
  for (const auto& node : graph.nodes) {
    for (const auto& name : node.inputs) {
      if (const DataType type = typeOf(graph, name); !name.empty() && isHalf(type)) original.emplace(name, type);
    }
    for (const auto& name : node.outputs) {
      if (const DataType type = typeOf(graph, name); !name.empty() && isHalf(type)) original.emplace(name, type);
    }
  }
  // Values that must keep their half type under their own name: graph outputs and what subgraph bodies read.
  std::set<std::string> keepName;
  for (const auto& out : graph.outputs) keepName.insert(out.name);
  for (const auto& node : graph.nodes) {
    for (const auto& name : graph.implicitInputs(node)) keepName.insert(name);
  }
  // Initializers that stay half and are cast where a float32 node reads them: those also listed as graph inputs (the
  // caller may feed them) and those whose bytes are not loaded (onnx_io::isDeferred).
  std::set<std::string> fedInitializers;
  for (const auto& in : graph.inputs) {
    if (graph.isInitializer(in.name)) fedInitializers.insert(in.name);
  }
  for (const auto& [name, tensor] : graph.initializers) {
    if (tensor.rawData() == nullptr && tensor.numel() > 0) fedInitializers.insert(name);
  }

  // Each half value gets a half and/or float32 name on demand.
  ir::CastRewriter rewriter(graph, DataType::FLOAT, {"kiln_cpu_float32_cast_", "_kiln_fp32", "_kiln_half"});
  // Half initializers read as T by a float32 node: float32 in place when every reader is one, a copy beside otherwise.
  std::map<std::string, std::pair<bool, bool>> readers;  // initializer -> (a float32 reader, a half reader)
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      auto init = graph.initializers.find(node.inputs[k]);
      if (init == graph.initializers.end() || !isHalf(init->second.dtype())) continue;
      auto& [wants32, wantsHalf] = readers[node.inputs[k]];
      (widen[i] && isTypeInput(node, k) ? wants32 : wantsHalf) = true;
    }
  }
  for (const auto& [name, wants] : readers) {
    if (!wants.first || fedInitializers.count(name)) continue;
    Tensor& tensor = graph.initializers.at(name);
    stats.initializers++;
    if (!wants.second && !keepName.count(name)) {
      tensor = widened(tensor);
      if (auto info = graph.valueInfo.find(name); info != graph.valueInfo.end()) info->second.dtype = DataType::FLOAT;
      rewriter.setName(name, DataType::FLOAT, name);
    } else {
      graph.initializers[name + "_kiln_fp32"] = widened(tensor);
      rewriter.setName(name, DataType::FLOAT, name + "_kiln_fp32");
    }
  }

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node node = graph.nodes[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      auto type = original.find(node.inputs[k]);
      if (type == original.end()) continue;
      const bool single = widen[i] && isTypeInput(node, k);
      node.inputs[k] = rewriter.resolve(node.inputs[k], single ? DataType::FLOAT : type->second);
    }
    std::vector<std::pair<std::string, std::string>> exits;  // (float32 name, kept half name) to cast back
    DataType half = DataType::UNDEFINED;
    for (auto& out : node.outputs) {
      auto type = original.find(out);
      if (!widen[i] || type == original.end()) continue;
      half = type->second;
      if (keepName.count(out)) {
        const std::string renamed = out + "_kiln_fp32";
        rewriter.addValue(renamed, out, DataType::FLOAT);
        rewriter.setName(out, DataType::FLOAT, renamed);
        rewriter.setName(out, half, out);
        exits.emplace_back(renamed, out);
        out = renamed;
      } else {
        ir::ValueInfo& info = graph.valueInfo[out];
        info.name = out;
        info.dtype = DataType::FLOAT;
        rewriter.setName(out, DataType::FLOAT, out);
      }
    }
    if (widen[i]) stats.nodes++;
    rewriter.append(std::move(node));
    for (const auto& [from, to] : exits) rewriter.emitCast(from, to, half);
  }
  graph.nodes = rewriter.takeNodes();
  stats.casts = rewriter.casts();
  return stats;
}

}  // namespace kiln::cpu
