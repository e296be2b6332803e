// Shape arithmetic inside Vulkan partitions. Nodes whose inputs are all known on the host (initializers, integer
// values from outside the partition, Shape/Size results) compute small integer tensors — shapes, axes, indices —
// that kernels need while recording. The Vulkan EP evaluates them on the host with the HostEvaluator the session
// gives it (the CPU EP's kernels) instead of splitting the partition, as GPU EPs of ONNX Runtime place shape
// subgraphs on the CPU.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "ep/host_evaluator.h"
#include "ir/graph.h"

namespace kiln::vk {

struct DeviceInfo;

enum class Placement { HOST, DEVICE, NONE };

struct NodePlacement {
  Placement placement = Placement::NONE;
  std::string reason;  // why NONE
};

// Decides, in topological order, where each node of `graph` runs inside a Vulkan partition: HOST (shape
// arithmetic `host` can evaluate), DEVICE (a Vulkan kernel claims it), or NONE (with the reason). `nodeIndices`
// restricts the analysis to a partition (empty = every node). Values produced by unplaced nodes reach a partition
// as inputs.
std::vector<NodePlacement> placeNodes(const ir::Graph& graph, const ir::Model& model, const DeviceInfo& device,
                                      const HostEvaluator& host,
                                      const std::vector<size_t>& nodeIndices = {});

// The declared or inferred type of `value` as seen from `graph`: its own value info first, then any graph of
// the model (subgraph bodies read outer-scope values whose types live in an enclosing graph; ONNX names are
// unique model-wide).
const ir::ValueInfo* findValueInfoInModel(const ir::Graph& graph, const ir::Model& model, const std::string& value);

// The initializer `value` as seen from `graph`: its own, else one of a graph enclosing it in `model` (an If/Loop/Scan
// body reads outer-scope initializers; Silero VAD legacy's bodies convolve with the main graph's weights). nullptr
// when `value` is no initializer in scope.
const Tensor* findInitializerInScope(const ir::Graph& graph, const ir::Model& model, const std::string& value);

// The opset of `node`'s domain in `model`.
int64_t opsetFor(const ir::Model& model, const ir::Node& node);

// Prepares a HOST node for evaluation by `host`, with the initializers of `graph` it reads as constant inputs.
Result<std::unique_ptr<HostNode>> createHostKernel(const ir::Node& node, int64_t opset, const ir::Graph& graph,
                                                   const HostEvaluator& host);

}  // namespace kiln::vk
