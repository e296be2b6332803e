// Pass (level `all`): exact QDQ drops over the whole model, bodies included (ops/qdq_drop.h). onnxruntime
// drops these pairs in its extended level (QDQSelectorActionTransformer's DropQDQNodes rules), which Kiln's
// `all` corresponds to; the data-movement op then runs on the 8-bit tensor on whichever EP takes it.
#include "ops/qdq_drop.h"

#include "ir/graph_paths.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

namespace {

// `enclosing`: the graphs around `graph`, innermost first.
int64_t dropInScope(ir::Graph& graph, const ir::Model& model,
                    const std::vector<const ir::Graph*>& enclosing) {
  ops::QdqDropPolicy policy;
  policy.opset = model.opsetVersion("");
  policy.enclosing = enclosing;
  int64_t dropped = ops::dropExactQdqPairs(graph, policy);
  std::vector<const ir::Graph*> inner = {&graph};
  inner.insert(inner.end(), enclosing.begin(), enclosing.end());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "",
                    [&](ir::Graph& body, const std::string&) { dropped += dropInScope(body, model, inner); });
  }
  return dropped;
}

}  // namespace

int64_t dropExactQdqPairs(ir::Graph& graph, const ir::Model& model) { return dropInScope(graph, model, {}); }

}  // namespace kiln::optimizer
