// Pass (level `all`): exact QDQ drops over the whole model, bodies included (ops/qdq_drop.h). onnxruntime
// drops these pairs in its extended level (QDQSelectorActionTransformer's DropQDQNodes rules), which Kiln's
// `all` corresponds to; the data-movement op then runs on the 8-bit tensor on whichever EP takes it.
#include "ir/graph_paths.h"
#include "ops/qdq_drop.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

int64_t dropExactQdqPairs(ir::Graph& graph, const ir::Model& model) {
  ops::QdqDropPolicy policy;
  policy.opset = model.opsetVersion("");
  int64_t dropped = ops::dropExactQdqPairs(graph, policy);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "",
                    [&](ir::Graph& body, const std::string&) { dropped += dropExactQdqPairs(body, model); });
  }
  return dropped;
}

}  // namespace kiln::optimizer
