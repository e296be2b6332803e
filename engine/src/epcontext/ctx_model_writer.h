// A compiled model in EPContext form: each fused partition node becomes a com.microsoft EPContext node that
// points at (or embeds) the context binary holding the partition; everything else of the model stays.
#pragma once

#include <span>
#include <string>

#include "context_binary/context_binary.h"
#include "device/device_info.h"
#include "ir/graph.h"
#include "partition/compiled_model.h"

namespace kiln::epctx {

// Prefixes every partition name (and its graph's name) and the fused node that runs it: ep.context_node_name_prefix.
void applyNodeNamePrefix(CompiledModel& compiled, const std::string& prefix);

struct EpContextSettings {
  int embedMode = 0;
  std::string binaryReference;      // embed mode 0: ep_cache_context, the binary's path relative to the ctx model
  std::string sourceModelFilename;  // onnx_model_filename
  std::string compileRecord;        // metadata kiln.compile_record (compile_record.h); "" writes none
};

// The ctx model of `compiled`: EPContext nodes in place of the fused nodes (graph inputs and outputs in their
// order, CPU-fallback nodes and the initializers they read kept, initializers only partitions read dropped),
// com.microsoft imported, and metadata_props recording ep_compatibility_info.VulkanExecutionProvider and, with
// embed mode 0, the content id of the binary whose header and section table are `head` (the context binary of
// compiled.partitions: only its head is needed, so the binary may still be streamed later). With embed mode 1 the
// first EPContext node in topological order carries `embedded`, the whole binary (main_context=1); the others
// name their graph in partition_name with main_context=0. `target` is the device the binary was compiled for.
Result<ir::Model> epContextModelFor(const CompiledModel& compiled, const EpContextSettings& settings,
                                   const ctxbin::BinaryHead& head, std::span<const std::byte> embedded,
                                   const vk::DeviceInfo& target);

// A deep copy of `graph` (subgraphs included; tensors are shared, they are immutable).
std::shared_ptr<ir::Graph> cloneGraph(const ir::Graph& graph);

// Every EPContext node of `model` (subgraphs included), in topological order: (graph, node index).
std::vector<std::pair<ir::Graph*, size_t>> epContextNodes(ir::Model& model);
bool isEpContextNode(const ir::Node& node);

}  // namespace kiln::epctx
