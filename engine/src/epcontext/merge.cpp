// kiln/epcontext.h: mergeEpContextModels — several ctx models become one, names prefixed per input, with one
// combined context binary whose weights are deduplicated across the inputs.
#include <filesystem>
#include <functional>
#include <set>

#include "epcontext/ctx_model_loader.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/ctx_outputs.h"
#include "epcontext/merge.h"
#include "epcontext/epcontext_names.h"
#include "kiln/compile_outputs.h"
#include "kiln/epcontext.h"
#include "onnx/model_loader.h"
#include "onnx/path_rules.h"
#include "partition/graph_partitioner.h"
#include "util/file_io.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Rename = std::function<std::string(const std::string&)>;

// Renames every value, node and graph name of `graph` and its bodies with `rename` (the same function everywhere,
// so names a body reads from an enclosing graph stay consistent).
void renameGraph(ir::Graph& graph, const Rename& rename) {
  graph.name = rename(graph.name);
  for (auto& v : graph.inputs) v.name = rename(v.name);
  for (auto& v : graph.outputs) v.name = rename(v.name);
  std::map<std::string, ir::ValueInfo> valueInfo;
  for (auto& [name, info] : graph.valueInfo) {
    info.name = rename(name);
    valueInfo.emplace(info.name, std::move(info));
  }
  graph.valueInfo = std::move(valueInfo);
  std::map<std::string, Tensor> initializers;
  for (auto& [name, tensor] : graph.initializers) initializers.emplace(rename(name), std::move(tensor));
  graph.initializers = std::move(initializers);
  for (auto& node : graph.nodes) {
    node.name = rename(node.name);
    for (auto& in : node.inputs) in = rename(in);
    for (auto& out : node.outputs) out = rename(out);
    for (auto& [key, attr] : node.attributes) {
      if (attr.g) renameGraph(*attr.g, rename);
      for (auto& g : attr.graphs) {
        if (g) renameGraph(*g, rename);
      }
    }
  }
}

void prefixCompiledModel(CompiledModel& compiled, const std::string& prefix) {
  if (prefix.empty()) return;
  const Rename rename = [&](const std::string& name) { return name.empty() ? name : prefix + name; };
  compiled.model.graph = epctx::cloneGraph(*compiled.model.graph);
  renameGraph(*compiled.model.graph, rename);
  for (auto& partition : compiled.partitions) {
    partition.name = rename(partition.name);
    for (auto& in : partition.inputs) in = rename(in);
    for (auto& out : partition.outputs) out = rename(out);
    auto graph = epctx::cloneGraph(*partition.graph);
    renameGraph(*graph, rename);
    graph->name = partition.name;
    partition.graph = std::move(graph);
  }
}

// The binaries an input's EPContext nodes name (resolved), so the merge never writes over one.
std::set<std::string> referencedBinaries(ir::Model& model, const std::string& folder) {
  std::set<std::string> paths;
  for (const auto& [graph, index] : epctx::epContextNodes(model)) {
    const ir::Node& node = graph->nodes[index];
    if (node.attrInt(epctx::kEmbedMode, 1) != 0) continue;
    auto path = resolveContainedPath(folder, node.attrString(epctx::kEpCacheContext, ""), "ep_cache_context");
    if (path.isOk()) paths.insert(path->string());
  }
  return paths;
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(path, ec), ec).string();
}

// Appends `part` (prefixed already; planMerge found no conflict) to the combined model.
void addModel(CompiledModel& into, CompiledModel part) {
  const auto offset = static_cast<int64_t>(into.partitions.size());
  std::function<void(ir::Graph&)> shift = [&](ir::Graph& g) {
    for (auto& node : g.nodes) {
      if (node.opType == kFusedPartitionOpType && node.domain == kFusedPartitionDomain) {
        node.attributes[kFusedPartitionAttribute].i += offset;
      }
      for (auto& [key, attr] : node.attributes) {
        if (attr.g) shift(*attr.g);
        for (auto& body : attr.graphs) {
          if (body) shift(*body);
        }
      }
    }
  };
  shift(*part.model.graph);
  for (auto& p : part.partitions) into.partitions.push_back(std::move(p));
  for (auto& r : part.resources) into.resources.push_back(std::move(r));

  ir::Model& model = into.model;
  if (!model.graph) {
    model = part.model;
    model.graph->name = "merged";
    model.metadata.clear();
    return;
  }
  ir::Graph& target = *model.graph;
  ir::Graph& source = *part.model.graph;
  target.inputs.insert(target.inputs.end(), source.inputs.begin(), source.inputs.end());
  target.outputs.insert(target.outputs.end(), source.outputs.begin(), source.outputs.end());
  target.valueInfo.merge(source.valueInfo);
  target.initializers.merge(source.initializers);
  for (auto& node : source.nodes) target.nodes.push_back(std::move(node));
  for (const auto& [domain, version] : part.model.opsetImports) {
    int64_t& kept = model.opsetImports[domain];
    kept = std::max(kept, version);
  }
  model.irVersion = std::max(model.irVersion, part.model.irVersion);
}

// Feeds output `from` to graph input `to` (a connection planMerge accepted): `to` becomes an Identity's output.
Status connect(ir::Graph& graph, const std::string& from, const std::string& to) {
  auto input = std::find_if(graph.inputs.begin(), graph.inputs.end(), [&](const auto& v) { return v.name == to; });
  if (input == graph.inputs.end()) {
    return Status(StatusCode::INVALID_ARGUMENT, "connection " + from + " -> " + to + ": '" + to + "' is not a graph input");
  }
  graph.valueInfo[to] = *input;
  graph.inputs.erase(input);
  ir::Node identity;
  identity.name = "connect_" + from + "_to_" + to;
  identity.opType = "Identity";
  identity.inputs = {from};
  identity.outputs = {to};
  graph.nodes.push_back(std::move(identity));
  return Status::ok();
}

}  // namespace

namespace epctx {

Result<MergeResult> mergeModels(const std::vector<MergeInput>& inputs, const std::string& outputPath,
                                const std::vector<std::pair<std::string, std::string>>& connections,
                                const ctxbin::ContextHooksLookup& providers) {
  if (namesFolder(outputPath)) {
    return Status(StatusCode::INVALID_ARGUMENT, "output path '" + outputPath + "' should not point to a folder: give a file such as merged_ctx.onnx");
  }
  MergeResult result;
  result.outputModelPath = outputPath;
  std::set<std::string> inputFiles;  // every input's ctx model and binaries: the merge never overwrites one
  CompiledModel combined;
  std::vector<MergePlanInput> planned;
  std::vector<CompiledModel> parts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& path = inputs[i].ctxModelPath;
    KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path));
    const fs::path parent = fs::path(path).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    std::set<std::string> own = referencedBinaries(loaded.model, folder);
    own.insert(canonical(path));
    if (own.count(canonical(outputPath))) {
      return Status(StatusCode::INVALID_ARGUMENT, "the merge would overwrite " + outputPath + ", a file of input " + path +
                                                      ": choose another output name");
    }
    for (const auto& file : own) inputFiles.insert(canonical(file));
    if (!epctx::hasEpContextNodes(loaded.model)) {
      return Status(StatusCode::INVALID_ARGUMENT, path + " has no EPContext node: compile it first (kiln compile)");
    }
    SessionTimings unused;
    epctx::ContextLoadOptions nodesOnly;  // no device: the EPs only claim the nodes
    nodesOnly.admission.providers = providers;
    auto compiled = epctx::compiledModelFromEpContext(std::move(loaded.model), folder, nodesOnly, unused, false);
    if (!compiled.isOk()) return compiled.status().withContext("merging " + path);
    // A weightless binary's partitions hold no weights (their kernels derive them from the source at load).
    for (const auto& partition : compiled->partitions) {
      for (const auto& node : partition.nodes) {
        for (const auto& constant : node.constants) {
          if (constant.dtype() != DataType::STRING && !constant.rawData() && constant.numel() > 0) {
            return Status(StatusCode::INVALID_ARGUMENT, path + " is a weightless ctx model: merge ctx models compiled "
                                                               "with their weights (not weightless)");
          }
        }
      }
    }
    auto inspected = inspectEpContextModel(path);
    if (!inspected.isOk()) return inspected.status().withContext("merging " + path);
    planned.push_back({std::make_shared<const EpContextModelInfo>(std::move(inspected).value()), inputs[i].prefix});
    prefixCompiledModel(*compiled, inputs[i].prefix);
    parts.push_back(std::move(compiled).value());
  }
  KILN_RETURN_IF_ERROR(planMergeOfInspected(planned, connections).status());
  for (auto& part : parts) addModel(combined, std::move(part));
  ir::Graph& graph = *combined.model.graph;
  for (const auto& [from, to] : connections) KILN_RETURN_IF_ERROR(connect(graph, from, to));
  if (auto sorted = ir::sortTopologically(graph); !sorted.isOk()) {
    return Status(StatusCode::INVALID_ARGUMENT, "the connections make the merged graph invalid: " + sorted.message());
  }
  // The binary is named after the EP whose partitions it holds (kiln/compile_outputs.h).
  result.binaryPath = defaultContextBinaryPath(outputPath, combined.partitions.empty() ? std::string(kVulkanExecutionProvider)
                                                                                       : combined.partitions.front().executionProvider);
  if (inputFiles.count(canonical(result.binaryPath))) {
    return Status(StatusCode::INVALID_ARGUMENT, "the merge would overwrite " + result.binaryPath +
                                                    ", a file of an input: choose another output name");
  }
  KILN_ASSIGN_OR_RETURN(const epctx::EncodedBinary binary, epctx::prepareBinary(combined.partitions, providers));
  epctx::OutputLayout layout;
  const fs::path parent = fs::path(outputPath).parent_path();
  layout.modelFolder = parent.empty() ? "." : parent.string();
  layout.binaryPath = result.binaryPath;
  KILN_ASSIGN_OR_RETURN(const epctx::ModelFiles model, epctx::serializeCtxModel(combined, layout, binary));
  FileTransaction files;
  KILN_RETURN_IF_ERROR(epctx::stageBinary(files, result.binaryPath, binary));
  KILN_RETURN_IF_ERROR(files.stage(outputPath, model.model));
  KILN_RETURN_IF_ERROR(files.commit());
  result.epContextNodes = model.epContextNodes;
  KILN_ASSIGN_OR_RETURN(result.binary, inspectContextBinary(result.binaryPath));
  return result;
}

}  // namespace epctx
}  // namespace kiln
