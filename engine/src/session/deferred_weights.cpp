#include "session/deferred_weights.h"

#include <set>

#include "kiln/config_keys.h"
#include "onnx/model_loader.h"
#include "partition/graph_partitioner.h"
#include "session/config_value.h"
#include "session/session_config.h"

namespace kiln {
namespace {

// Values known at compile time: initializers and what nodes compute from them alone (Constant nodes
// included), which constant folding may evaluate. Nodes are in topological order.
std::set<std::string> compileTimeValues(const ir::Graph& graph) {
  std::set<std::string> known;
  for (const auto& [name, tensor] : graph.initializers) known.insert(name);
  for (const auto& node : graph.nodes) {
    bool allKnown = true;
    for (const auto& in : node.inputs) allKnown = allKnown && (in.empty() || known.count(in));
    for (const auto& in : graph.implicitInputs(node)) allKnown = allKnown && known.count(in);
    if (allKnown) known.insert(node.outputs.begin(), node.outputs.end());
  }
  return known;
}

// True for a node whose kernel reads its float weight inputs as they are, only when it runs: elementwise
// arithmetic with at least one input computed at run time (so no compile step folds or evaluates it).
bool takesWeightAsIs(const ir::Node& node, const ir::Graph& graph, const std::set<std::string>& known) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div"};
  if (!node.domain.empty() || !kOps.count(node.opType) || !node.attributes.empty()) return false;
  bool runTimeInput = false;
  for (const auto& in : node.inputs) {
    if (!in.empty() && !known.count(in)) runTimeInput = true;
    const auto weight = graph.initializers.find(in);
    if (weight == graph.initializers.end()) continue;
    const DataType type = weight->second.dtype();
    if (type != DataType::FLOAT && type != DataType::FLOAT16 && type != DataType::BFLOAT16 &&
        type != DataType::DOUBLE) {
      return false;  // integer arithmetic may run on the host, whose kernels may precompute from constants
    }
  }
  return runTimeInput;
}

// The names `graph`'s outputs and the nodes `readsAtCompile` selects (their inputs and subgraph reads) refer
// to.
template <class Select>
std::set<std::string> namesRead(const ir::Graph& graph, Select readsAtCompile) {
  std::set<std::string> read;
  for (const auto& output : graph.outputs) read.insert(output.name);
  for (const auto& node : graph.nodes) {
    for (const auto& name : graph.implicitInputs(node)) read.insert(name);
    if (readsAtCompile(node)) read.insert(node.inputs.begin(), node.inputs.end());
  }
  return read;
}

}  // namespace

bool compileMayDeferWeights(const SessionOptions& options) {
  return configValue(options, config::kVulkanFp16) != "1" &&
         configValue(options, config::kVulkanAutotune) != "1" && !weightlessRequested(options);
}

Status loadDeferredWeightsReadAtCompile(ir::Graph& graph,
                                        const std::map<std::string, ExternalInitializerInfo>& ranges) {
  const std::set<std::string> known = compileTimeValues(graph);
  std::set<std::string> read =
      namesRead(graph, [&](const ir::Node& node) { return !takesWeightAsIs(node, graph, known); });
  for (const auto& input : graph.inputs) read.insert(input.name);  // an initializer a caller may override
  return onnx_io::loadDeferredInitializers(graph, ranges,
                                           [&](const std::string& name) { return read.count(name) != 0; });
}

Status loadDeferredWeightsOutsidePartitions(ir::Graph& graph,
                                            const std::map<std::string, ExternalInitializerInfo>& ranges) {
  const std::set<std::string> outside =
      namesRead(graph, [](const ir::Node& node) { return node.domain != kFusedPartitionDomain; });
  std::set<std::string> partitionInputs;
  for (const auto& node : graph.nodes) {
    if (node.domain == kFusedPartitionDomain) partitionInputs.insert(node.inputs.begin(), node.inputs.end());
  }
  // Read unless only compiled partitions read it (an initializer nothing reads is read too: every writer of
  // the main graph then finds its bytes).
  return onnx_io::loadDeferredInitializers(graph, ranges, [&](const std::string& name) {
    return outside.count(name) != 0 || partitionInputs.count(name) == 0;
  });
}

}  // namespace kiln
