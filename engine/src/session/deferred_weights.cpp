#include "session/deferred_weights.h"

#include <set>

#include "epcontext/weightless.h"
#include "kiln/config_keys.h"
#include "onnx/model_loader.h"
#include "partition/graph_partitioner.h"
#include "util/config_value.h"

namespace kiln {
namespace {

// Op types whose kernels read a weight input as it is, never at compile time.
bool takesWeightAsIs(const ir::Node& node) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div"};
  return node.domain.empty() && kOps.count(node.opType) != 0 && node.attributes.empty();
}

// The names `graph`'s outputs and the nodes `readsAtCompile` selects (their inputs and subgraph reads) refer to.
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
  return configValue(options, config::kVulkanFp16) != "1" && !epctx::weightlessRequested(options);
}

Status loadDeferredWeightsReadAtCompile(ir::Graph& graph, const std::map<std::string, ExternalInitializerInfo>& ranges) {
  const std::set<std::string> read = namesRead(graph, [](const ir::Node& node) { return !takesWeightAsIs(node); });
  return onnx_io::loadDeferredInitializers(graph, ranges, [&](const std::string& name) { return read.count(name) != 0; });
}

Status loadDeferredWeightsOutsidePartitions(ir::Graph& graph, const std::map<std::string, ExternalInitializerInfo>& ranges) {
  const std::set<std::string> read =
      namesRead(graph, [](const ir::Node& node) { return node.domain != kFusedPartitionDomain; });
  return onnx_io::loadDeferredInitializers(graph, ranges, [&](const std::string& name) { return read.count(name) != 0; });
}

}  // namespace kiln
