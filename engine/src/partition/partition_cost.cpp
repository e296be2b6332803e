#include "partition/partition_cost.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace kiln::partition_cost {
namespace {

bool movesDataOnly(const ir::Node& node) {
  static const std::set<std::string> ops = {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"};
  return node.domain.empty() && ops.count(node.opType) != 0;
}

// The shape of a value with unknown dimensions counted as kUnknownDimExtent; nullopt when nothing is known.
std::optional<std::vector<int64_t>> shapeOf(const ir::Graph& graph, const ValueLookup& lookup,
                                            const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto init = graph.initializers.find(name);
  if (init != graph.initializers.end()) return init->second.shape();
  const ir::ValueInfo* info = lookup(name);
  if (!info || !info->shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& dim : *info->shape) dims.push_back(dim.isFixed() ? dim.value : kUnknownDimExtent);
  return dims;
}

double product(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

double elements(const ir::Graph& graph, const ValueLookup& lookup, const std::string& name) {
  auto dims = shapeOf(graph, lookup, name);
  return dims ? product(*dims) : 1.0;
}

// Dimension `axis` of a value's shape (negative counts from the end), or kUnknownDimExtent.
double dimOf(const ir::Graph& graph, const ValueLookup& lookup, const std::string& name, int64_t axis) {
  auto dims = shapeOf(graph, lookup, name);
  if (!dims) return static_cast<double>(kUnknownDimExtent);
  const int64_t rank = static_cast<int64_t>(dims->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return static_cast<double>(kUnknownDimExtent);
  return static_cast<double>(std::max<int64_t>((*dims)[static_cast<size_t>(axis)], 0));
}

const std::string& inputAt(const ir::Node& node, size_t index) {
  static const std::string none;
  return index < node.inputs.size() ? node.inputs[index] : none;
}

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

std::string countedNodes(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// "; 3 shape-arithmetic nodes run on the host inside it", or "".
std::string hostNote(const GroupCost& cost) {
  if (cost.hostNodes == 0) return "";
  return "; " + std::to_string(cost.hostNodes) +
         (cost.hostNodes == 1 ? " shape-arithmetic node runs" : " shape-arithmetic nodes run") +
         " on the host inside it";
}

}  // namespace

double nodeFlops(const ir::Graph& graph, const ValueLookup& lookup, const ir::Node& node) {
  if (movesDataOnly(node)) return 0;
  const std::string& op = node.opType;
  const double out = node.outputs.empty() ? 1.0 : elements(graph, lookup, node.outputs[0]);
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const std::string& weight = inputAt(node, op == "QLinearConv" ? 3 : 1);
    const double perOutput = elements(graph, lookup, weight) / std::max(1.0, dimOf(graph, lookup, weight, 0));
    return 2 * out * perOutput;
  }
  if (op == "ConvTranspose") {
    const std::string& weight = inputAt(node, 1);
    const double perInput = elements(graph, lookup, weight) / std::max(1.0, dimOf(graph, lookup, weight, 0));
    return 2 * elements(graph, lookup, inputAt(node, 0)) * perInput;
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    return 2 * out * dimOf(graph, lookup, inputAt(node, 0), -1);
  }
  if (op == "Gemm") {
    const int64_t axis = node.attrInt("transA", 0) != 0 ? 0 : 1;
    return 2 * out * dimOf(graph, lookup, inputAt(node, 0), axis);
  }
  if (op == "LSTM" || op == "GRU" || op == "RNN") {
    // Every step multiplies the input by W and the hidden state by R, for each batch row.
    const std::string& x = inputAt(node, 0);
    const double steps = dimOf(graph, lookup, x, 0) * dimOf(graph, lookup, x, 1);
    return 2 * steps *
           (elements(graph, lookup, inputAt(node, 1)) + elements(graph, lookup, inputAt(node, 2)));
  }
  // Elementwise, reductions, pooling, data rearrangement: one operation per element read or written.
  double most = out;
  for (const auto& in : node.inputs) {
    if (!in.empty() && !graph.isInitializer(in)) most = std::max(most, elements(graph, lookup, in));
  }
  return most;
}

GroupCost estimateGroupCost(const ir::Graph& graph, const ValueLookup& lookup,
                            const std::vector<size_t>& nodes, const std::vector<bool>& onHost,
                            const std::vector<std::string>& borderValues) {
  GroupCost cost;
  cost.nodes = nodes.size();
  for (size_t i : nodes) {
    const ir::Node& node = graph.nodes[i];
    if (onHost[i]) {
      ++cost.hostNodes;
    } else if (movesDataOnly(node)) {
      ++cost.dataMovementNodes;
    } else {
      cost.workFlops += nodeFlops(graph, lookup, node);
    }
  }
  for (const auto& name : borderValues) {
    if (name.empty() || graph.isInitializer(name)) continue;
    const ir::ValueInfo* info = lookup(name);
    const size_t elementSize = info ? dataTypeSize(info->dtype) : 0;
    cost.transferBytes += static_cast<int64_t>(elements(graph, lookup, name) *
                                               static_cast<double>(elementSize ? elementSize : 4));
  }
  return cost;
}

OffloadDecision decideOffload(const GroupCost& cost, const GroupContext& context) {
  const std::string transfers = formatBytes(cost.transferBytes) + " of transfers";
  const bool noWork = cost.hostNodes + cost.dataMovementNodes == cost.nodes;
  std::string rejection;
  if (noWork && context.cpuAtHand) {
    rejection = "kept on CPU: no device work in " + countedNodes(cost.nodes) + " (" +
                std::to_string(cost.hostNodes) + " host shape arithmetic, " +
                std::to_string(cost.dataMovementNodes) +
                " data movement), so a partition would only add a submit and " + transfers + " (" +
                formatMs(cost.overheadMs()) + ")";
  } else if (context.island && cost.workMs() <= cost.overheadMs()) {
    rejection = "kept on CPU: island of " + countedNodes(cost.nodes) + " between CPU nodes, " + transfers +
                " and a submit (" + formatMs(cost.overheadMs()) + ") outweigh " + formatMs(cost.workMs()) +
                " of work";
  }
  if (!rejection.empty() && context.keptBecause.empty()) return {false, rejection};
  if (!rejection.empty()) {
    return {true,
            "offloaded: " + context.keptBecause + " (the cost model alone would have " + rejection + ")"};
  }
  if (!context.keptBecause.empty()) return {true, "offloaded: " + context.keptBecause + hostNote(cost)};
  if (context.island) {
    return {true, "offloaded: " + formatMs(cost.workMs()) + " of work outweighs " + transfers +
                      " and a submit (" + formatMs(cost.overheadMs()) + ")" + hostNote(cost)};
  }
  return {true,
          "offloaded: not an island between CPU nodes (it reads or writes graph inputs or outputs, values of "
          "an enclosing graph or of another partition): " +
              formatMs(cost.workMs()) + " of work, " + transfers + hostNote(cost)};
}

std::string formatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  char text[32];
  const double kb = static_cast<double>(bytes) / 1024.0;
  if (kb < 1024.0) {
    std::snprintf(text, sizeof text, "%.1f KB", kb);
  } else {
    std::snprintf(text, sizeof text, "%.1f MB", kb / 1024.0);
  }
  return text;
}

}  // namespace kiln::partition_cost
