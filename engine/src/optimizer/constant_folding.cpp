// Pass: constant folding. A deterministic node whose inputs are all constant initializers of its graph, or of an
// enclosing graph (a body reading an outer-scope constant, as Silero VAD's LSTM weights sliced inside an If branch),
// is evaluated once with the CPU EP's kernel and replaced by initializers holding its outputs. Chains fold in one
// pass because nodes are visited in topological order; a graph folds before its bodies, so a body sees what its
// enclosing graph folded.
#include <algorithm>
#include <set>
#include <unordered_set>

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

// A graph being folded and the graphs enclosing it: resolves the names a node reads to constant tensors.
struct Scope {
  const ir::Graph& graph;
  const Scope* outer = nullptr;
  std::unordered_set<std::string> computed;  // names the graph's inputs and nodes define (they shadow outer names)

  Scope(const ir::Graph& g, const Scope* enclosing) : graph(g), outer(enclosing) {
    for (const auto& in : g.inputs) computed.insert(in.name);
    for (const auto& node : g.nodes) computed.insert(node.outputs.begin(), node.outputs.end());
  }

  // The constant value of `name` as this graph sees it, or nullptr when it is computed or fed at run time.
  const Tensor* constant(const std::string& name) const {
    if (graph.isInitializer(name)) return isConstantInitializer(graph, name) ? &graph.initializers.at(name) : nullptr;
    if (computed.count(name)) return nullptr;
    return outer ? outer->constant(name) : nullptr;
  }
};

// Whether a node may be folded, judged before evaluating it.
bool foldable(const Scope& scope, const ir::Node& node) {
  const ir::Graph& graph = scope.graph;
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  if (nondeterministicOps().count(node.opType) || ir::hasSubgraphs(node)) return false;
  if (node.outputs.empty()) return false;
  for (const auto& in : node.inputs) {
    if (!in.empty() && !scope.constant(in)) return false;
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

namespace {

int64_t foldInScope(ir::Graph& graph, const ir::Model& model, const HostEvaluator& host, const Scope* outer) {
  int64_t folded = 0;
  const Scope scope(graph, outer);
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes.size());
  for (auto& node : graph.nodes) {
    if (foldable(scope, node)) {
      std::vector<const Tensor*> inputs;
      for (const auto& in : node.inputs) inputs.push_back(in.empty() ? nullptr : scope.constant(in));
      // A node that fails here stays: it fails again at run time, with the session's context in the message.
      auto outputs = evaluateNode(node, model, inputs, host);
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
  // The bodies see this graph's constants, the ones just folded included (their names leave `computed`).
  const Scope foldedScope(graph, outer);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "", [&](ir::Graph& body, const std::string&) {
      folded += foldInScope(body, model, host, &foldedScope);
    });
  }
  return folded;
}

}  // namespace

int64_t foldConstantSubexpressions(ir::Graph& graph, const ir::Model& model, const HostEvaluator& host) {
  return foldInScope(graph, model, host, nullptr);
}

}  // namespace kiln::optimizer
