// Pass: Constant nodes become initializers of the graph that holds them (bodies included), so partitions see
// weights, not nodes, and the partition report lists them separately.
#include "ir/graph_paths.h"
#include "optimizer/node_evaluator.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

void foldConstantNodes(ir::Graph& graph, const ir::Model& model, const HostEvaluator& host, const std::string& path,
                       std::vector<FoldedConstantRecord>& folded) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, path, [&](ir::Graph& body, const std::string& bodyPath) {
      foldConstantNodes(body, model, host, bodyPath, folded);
    });
  }
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes.size());
  for (auto& node : graph.nodes) {
    const bool candidate = node.opType == "Constant" && (node.domain.empty() || node.domain == "ai.onnx") &&
                           node.outputs.size() == 1 && !node.outputs[0].empty() &&
                           !graph.isInitializer(node.outputs[0]);
    if (candidate) {
      // The CPU kernel parses the value attributes; a malformed Constant (sparse, none or several values) stays a
      // node and fails at session creation with the kernel's message.
      auto value = evaluateNode(node, model, {}, host);
      if (value.isOk() && (*value)[0].defined()) {
        graph.initializers[node.outputs[0]] = (*value)[0];
        folded.push_back({&graph, path, node.label(), node.outputs[0]});
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
}

}  // namespace kiln::optimizer
