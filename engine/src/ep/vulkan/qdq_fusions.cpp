#include "ep/vulkan/qdq_fusions.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace kiln::vk {
namespace {

bool isViewOp(const std::string& op) {
  static const std::set<std::string> ops = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return ops.count(op) != 0;
}

bool isCopyOp(const std::string& op) {
  static const std::set<std::string> ops = {"Transpose", "Slice",        "Expand",
                                            "Tile",      "DepthToSpace", "SpaceToDepth"};
  return ops.count(op) != 0;
}

// MaxPool commutes with a dequantization whose scale is positive (it is then non-decreasing), and an empty
// window's lowest float quantizes to the type's lowest, which the 8-bit MaxPool writes: exact where the 8-bit
// kernel runs (1-D and 2-D windows, no Indices output).
bool isExactMaxPool(const ir::Node& node) {
  if (node.opType != "MaxPool" || node.outputs.size() != 1) return false;
  const size_t spatial = node.attrInts("kernel_shape").size();
  return spatial == 1 || spatial == 2;
}

// The producer of each value and how many nodes read it.
struct Uses {
  std::map<std::string, size_t> producer;
  std::map<std::string, int> readers;
};

Uses usesOf(const ir::Graph& graph) {
  Uses uses;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) uses.producer[out] = i;
    for (const auto& in : graph.nodes[i].inputs) {
      if (!in.empty()) ++uses.readers[in];
    }
  }
  return uses;
}

// Input i of `node` when present, else "".
std::string inputOf(const ir::Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : std::string();
}

// The one-element initializer `name`, or nullptr.
const Tensor* scalarInitializer(const ir::Graph& graph, const std::string& name) {
  auto it = graph.initializers.find(name);
  return it != graph.initializers.end() && it->second.numel() == 1 && it->second.rank() <= 1 ? &it->second
                                                                                             : nullptr;
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

DataType typeOf(const ir::Graph& graph, const std::string& value) {
  if (auto init = graph.initializers.find(value); init != graph.initializers.end())
    return init->second.dtype();
  const ir::ValueInfo* info = graph.findValueInfo(value);
  return info ? info->dtype : DataType::UNDEFINED;
}

// Whether DequantizeLinear `dq` and QuantizeLinear `q` use the same constant per-tensor scale and zero point,
// and the 8-bit type dq reads is the one q writes.
bool sameParameters(const ir::Graph& graph, const ir::Node& dq, const ir::Node& q) {
  if (dq.attrInt("block_size", 0) != 0 || q.attrInt("block_size", 0) != 0) return false;
  const Tensor* s1 = scalarInitializer(graph, inputOf(dq, 1));
  const Tensor* s2 = scalarInitializer(graph, inputOf(q, 1));
  if (!s1 || !s2 || !exactScale(*s1) || !sameScalar(*s1, *s2)) return false;
  const std::string z1 = inputOf(dq, 2), z2 = inputOf(q, 2);
  const DataType quantized = typeOf(graph, inputOf(dq, 0));
  if (quantized != DataType::UINT8 && quantized != DataType::INT8) return false;
  if (z1.empty() || z2.empty()) return z1.empty() && z2.empty() && quantized == DataType::UINT8;
  const Tensor* zp1 = scalarInitializer(graph, z1);
  const Tensor* zp2 = scalarInitializer(graph, z2);
  return zp1 && zp2 && zp1->dtype() == quantized && sameScalar(*zp1, *zp2);
}

}  // namespace

int dropQdqAroundDataMovement(ir::Graph& graph, const std::vector<std::string>& keep, bool moveBytes) {
  const std::set<std::string> kept(keep.begin(), keep.end());
  int rewritten = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    const Uses uses = usesOf(graph);
    for (size_t i = 0; i < graph.nodes.size() && !changed; ++i) {
      ir::Node& op = graph.nodes[i];
      const bool pool = moveBytes && isExactMaxPool(op);
      if (!op.domain.empty() || !(isViewOp(op.opType) || (moveBytes && isCopyOp(op.opType)) || pool))
        continue;
      if (op.inputs.empty() || op.outputs.size() != 1) continue;
      const std::string dequantized = op.inputs[0], moved = op.outputs[0];
      auto dqAt = uses.producer.find(dequantized);
      if (dqAt == uses.producer.end() || kept.count(dequantized) || kept.count(moved)) continue;
      if (uses.readers.at(dequantized) != 1 || uses.readers.count(moved) == 0 || uses.readers.at(moved) != 1)
        continue;
      size_t qAt = graph.nodes.size();
      for (size_t k = i + 1; k < graph.nodes.size() && qAt == graph.nodes.size(); ++k) {
        if (inputOf(graph.nodes[k], 0) == moved) qAt = k;
      }
      if (qAt == graph.nodes.size()) continue;
      const ir::Node& dq = graph.nodes[dqAt->second];
      const ir::Node& q = graph.nodes[qAt];
      if (!dq.domain.empty() || dq.opType != "DequantizeLinear" || !q.domain.empty() ||
          q.opType != "QuantizeLinear")
        continue;
      if (q.outputs.size() != 1 || typeOf(graph, dequantized) != DataType::FLOAT ||
          !sameParameters(graph, dq, q) ||
          (pool && !(graph.initializers.at(dq.inputs[1]).data<float>()[0] > 0)))
        continue;
      // op reads the 8-bit tensor and writes the QuantizeLinear's output; both quantization nodes go.
      op.inputs[0] = dq.inputs[0];
      op.outputs[0] = q.outputs[0];
      const size_t first = std::min(dqAt->second, qAt), second = std::max(dqAt->second, qAt);
      graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(second));
      graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(first));
      ++rewritten;
      changed = true;
    }
  }
  return rewritten;
}

}  // namespace kiln::vk
