// Pass: constant folding. A deterministic node whose inputs are all constant initializers of its graph is
// evaluated once with the CPU EP's kernel and replaced by initializers holding its outputs. Chains fold in one
// pass because nodes are visited in topological order.
#include <algorithm>
#include <set>

#include "ir/graph_paths.h"
#include "optimizer/node_evaluator.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {
namespace {

// Ops whose result may differ between runs (or that draw random numbers): never folded.
const std::set<std::string>& nondeterministicOps() {
  static const std::set<std::string> ops = {"RandomNormal",    "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial",   "Bernoulli",
                                            "Dropout"};
  return ops;
}

// Whether a node may be folded, judged before evaluating it.
bool foldable(const ir::Graph& graph, const ir::Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  if (nondeterministicOps().count(node.opType) || ir::hasSubgraphs(node)) return false;
  if (node.outputs.empty()) return false;
  for (const auto& in : node.inputs) {
    if (!in.empty() && !isConstantInitializer(graph, in)) return false;
  }
  for (const auto& out : node.outputs) {
    if (out.empty()) continue;
    const ir::ValueInfo* info = graph.findValueInfo(out);
    if (!info) continue;
    if (info->kind != ir::ValueKind::TENSOR) return false;  // sequences and optionals are not initializers
    if (info->shape) {
      // Skip results known to be large before computing them.
      int64_t elements = 1;
      bool known = true;
      for (const auto& d : *info->shape) {
        if (!d.isFixed()) known = false;
        else elements *= std::max<int64_t>(d.value, 1);
      }
      if (known && elements > kMaxFoldedElements) return false;
    }
  }
  return true;
}

}  // namespace

bool isConstantInitializer(const ir::Graph& graph, const std::string& name) {
  if (!graph.isInitializer(name)) return false;
  // Old models list initializers as graph inputs too: the caller may feed them, so they are not constants.
  return std::none_of(graph.inputs.begin(), graph.inputs.end(), [&](const ir::ValueInfo& v) { return v.name == name; });
}

int64_t foldConstantSubexpressions(ir::Graph& graph, const ir::Model& model) {
  int64_t folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "", [&](ir::Graph& body, const std::string&) {
      folded += foldConstantSubexpressions(body, model);
    });
  }
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes.size());
  for (auto& node : graph.nodes) {
    if (foldable(graph, node)) {
      std::vector<const Tensor*> inputs;
      for (const auto& in : node.inputs) inputs.push_back(in.empty() ? nullptr : &graph.initializers.at(in));
      // A node that fails here stays: it fails again at run time, with the session's context in the message.
      auto outputs = evaluateNode(node, model, inputs);
      bool usable = outputs.isOk();
      for (size_t o = 0; usable && o < node.outputs.size(); ++o) {
        if (node.outputs[o].empty()) continue;
        const Tensor& value = (*outputs)[o];
        usable = value.defined() && value.numel() <= kMaxFoldedElements;
      }
      if (usable) {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          if (!node.outputs[o].empty()) graph.initializers[node.outputs[o]] = (*outputs)[o];
        }
        ++folded;
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return folded;
}

}  // namespace kiln::optimizer
