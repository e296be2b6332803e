#include "ep/vulkan/host_kernel.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/vulkan_device.h"

namespace kiln::vk {
namespace {

// Ops that are cheap shape arithmetic when every input is known on the host.
const std::set<std::string>& hostOps() {
  static const std::set<std::string> ops = {
      "Constant", "ConstantOfShape", "Identity", "Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Reshape",
      "Cast", "Add", "Sub", "Mul", "Div", "Equal", "Not", "And", "Or", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Range", "Where", "Min", "Max", "ReduceProd", "ReduceSum", "Floor", "Ceil", "Neg", "Abs",
      "Expand", "Tile", "Sqrt", "Mod", "Flatten", "Transpose"};
  return ops;
}

bool isIntegral(DataType type) {
  switch (type) {
    case DataType::INT64:
    case DataType::INT32:
    case DataType::INT16:
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::UINT16:
    case DataType::UINT32:
    case DataType::UINT64:
    case DataType::BOOL:
      return true;
    default:
      return false;
  }
}

const ir::ValueInfo* searchGraph(const ir::Graph& graph, const std::string& value) {
  if (const ir::ValueInfo* info = graph.findValueInfo(value)) return info;
  for (const auto& node : graph.nodes) {
    for (const auto& [key, attribute] : node.attributes) {
      if (attribute.g) {
        if (const ir::ValueInfo* info = searchGraph(*attribute.g, value)) return info;
      }
      for (const auto& body : attribute.graphs) {
        if (const ir::ValueInfo* info = searchGraph(*body, value)) return info;
      }
    }
  }
  return nullptr;
}

// Appends the graphs that enclose `target` inside `graph` (innermost last, `graph` first); false when `target` is
// not inside `graph`.
bool collectEnclosing(const ir::Graph& graph, const ir::Graph* target, std::vector<const ir::Graph*>& chain) {
  if (&graph == target) return true;
  chain.push_back(&graph);
  for (const auto& node : graph.nodes) {
    for (const auto& [key, attribute] : node.attributes) {
      if (attribute.g && collectEnclosing(*attribute.g, target, chain)) return true;
      for (const auto& body : attribute.graphs) {
        if (collectEnclosing(*body, target, chain)) return true;
      }
    }
  }
  chain.pop_back();
  return false;
}

}  // namespace

const Tensor* findInitializerInScope(const ir::Graph& graph, const ir::Model& model, const std::string& value) {
  if (auto own = graph.initializers.find(value); own != graph.initializers.end()) return &own->second;
  std::vector<const ir::Graph*> enclosing;
  if (!model.graph || !collectEnclosing(*model.graph, &graph, enclosing)) return nullptr;
  for (auto outer = enclosing.rbegin(); outer != enclosing.rend(); ++outer) {
    if (auto init = (*outer)->initializers.find(value); init != (*outer)->initializers.end()) return &init->second;
  }
  return nullptr;
}

const ir::ValueInfo* findValueInfoInModel(const ir::Graph& graph, const ir::Model& model, const std::string& value) {
  if (const ir::ValueInfo* info = graph.findValueInfo(value)) return info;
  return model.graph ? searchGraph(*model.graph, value) : nullptr;
}

int64_t opsetFor(const ir::Model& model, const ir::Node& node) {
  return model.opsetVersion(node.domain.empty() ? "" : node.domain);
}

std::vector<NodePlacement> placeNodes(const ir::Graph& graph, const ir::Model& model, const DeviceInfo& device,
                                      const HostEvaluator& host, const std::vector<size_t>& nodeIndices) {
  std::vector<size_t> order = nodeIndices;
  if (order.empty()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) order.push_back(i);
  }
  // Values known on the host: initializers, integer values from outside (graph inputs, outer scope, nodes
  // left to other EPs), and results of HOST nodes. Device results are not (reading them back would stall).
  std::unordered_set<std::string> deviceValues;
  std::unordered_set<std::string> hostValues;
  auto knownOnHost = [&](const std::string& name) {
    if (hostValues.count(name) || findInitializerInScope(graph, model, name)) return true;
    if (deviceValues.count(name)) return false;
    const ir::ValueInfo* info = findValueInfoInModel(graph, model, name);
    return info && isIntegral(info->dtype);
  };
  std::vector<NodePlacement> result(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const ir::Node& node = graph.nodes[order[k]];
    NodePlacement& placement = result[k];
    const int64_t opset = opsetFor(model, node);
    // Sequences and optionals live only in the CPU executor: nodes that read or write one stay there.
    auto notTensor = [&](const std::string& name) {
      const ir::ValueInfo* info = name.empty() ? nullptr : findValueInfoInModel(graph, model, name);
      return info && (info->kind == ir::ValueKind::SEQUENCE || info->kind == ir::ValueKind::OPTIONAL ||
                      info->kind == ir::ValueKind::MAP);
    };
    if (std::any_of(node.inputs.begin(), node.inputs.end(), notTensor) ||
        std::any_of(node.outputs.begin(), node.outputs.end(), notTensor)) {
      placement.reason = "sequence and optional values run on the CPU EP";
      for (const auto& out : node.outputs) deviceValues.insert(out);
      continue;
    }
    bool allHost = true;
    for (const auto& in : node.inputs) allHost = allHost && (in.empty() || knownOnHost(in));
    const bool shapeOnly = node.opType == "Shape" || node.opType == "Size";
    if (node.domain.empty() && (shapeOnly || (allHost && hostOps().count(node.opType))) &&
        host.canEvaluate(node.domain, node.opType, opset)) {
      placement.placement = Placement::HOST;
      for (const auto& out : node.outputs) hostValues.insert(out);
      continue;
    }
    const KernelEntry* entry = findKernel(node.domain, node.opType, opset);
    if (!entry) {
      placement.reason = "no Vulkan kernel for " + (node.domain.empty() ? "" : node.domain + ".") + node.opType +
                         " at opset " + std::to_string(opset);
    } else {
      SupportQuery query{node, opset, device, {}, {}, {}, {}};
      for (const auto& in : node.inputs) {
        query.constantInputs.push_back(in.empty() ? nullptr : findInitializerInScope(graph, model, in));
        query.inputInfo.push_back(in.empty() ? nullptr : findValueInfoInModel(graph, model, in));
        // Readable on the host while recording: anything not computed by a device kernel of this partition.
        query.inputOnHost.push_back(!in.empty() && !deviceValues.count(in));
      }
      for (const auto& out : node.outputs) {
        query.outputInfo.push_back(out.empty() ? nullptr : findValueInfoInModel(graph, model, out));
      }
      NodeSupport support = entry->support ? entry->support(query) : supported();
      if (support.supported) {
        placement.placement = Placement::DEVICE;
        for (const auto& out : node.outputs) deviceValues.insert(out);
        continue;
      }
      placement.reason = support.reason;
    }
    // Left to another EP: its float results are not on the host for us (integers are, as partition inputs).
    for (const auto& out : node.outputs) {
      const ir::ValueInfo* info = findValueInfoInModel(graph, model, out);
      if (!info || !isIntegral(info->dtype)) deviceValues.insert(out);
    }
  }
  return result;
}

Result<std::unique_ptr<HostNode>> createHostKernel(const ir::Node& node, int64_t opset, const ir::Graph& graph,
                                                   const HostEvaluator& host) {
  std::vector<const Tensor*> constantInputs;
  for (const auto& in : node.inputs) {
    auto init = graph.initializers.find(in);
    constantInputs.push_back(in.empty() || init == graph.initializers.end() ? nullptr : &init->second);
  }
  return host.prepare(node, opset, std::move(constantInputs));
}

}  // namespace kiln::vk
