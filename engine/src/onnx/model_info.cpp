// kiln/model_info.h: a read-only description of a model for tools.
#include "kiln/model_info.h"

#include "onnx/model_loader.h"

namespace kiln {
Result<ModelInfo> inspectModel(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path));
  const ir::Model& model = loaded.model;
  const ir::Graph& graph = *model.graph;
  ModelInfo info;
  info.path = path;
  info.irVersion = model.irVersion;
  info.opsetImports = model.opsetImports;
  info.producerName = model.producerName;
  for (const auto& in : graph.inputs) {
    if (!graph.isInitializer(in.name)) info.inputs.push_back(ir::toValueMetadata(in));
    info.values[in.name] = ir::toValueMetadata(in);
  }
  for (const auto& out : graph.outputs) {
    info.outputs.push_back(ir::toValueMetadata(out));
    info.values[out.name] = ir::toValueMetadata(out);
  }
  for (const auto& [name, vi] : graph.valueInfo) info.values.emplace(name, ir::toValueMetadata(vi));
  for (const auto& [name, tensor] : graph.initializers) {
    ++info.initializerCount;
    info.initializerBytes += static_cast<int64_t>(tensor.byteSize());
    ValueMetadata meta;
    meta.name = name;
    meta.dtype = tensor.dtype();
    meta.hasShape = true;
    for (int64_t d : tensor.shape()) meta.shape.push_back(Dimension{d, {}});
    info.values.emplace(name, std::move(meta));
  }
  for (const auto& node : graph.nodes) {
    NodeInfo n{node.name, node.opType, node.domain, node.inputs, node.outputs, {}, {}};
    for (const auto& [key, attr] : node.attributes) {
      n.attributeNames.push_back(key);
      if (attr.g || !attr.graphs.empty()) n.subgraphNames.push_back(key);
    }
    info.nodes.push_back(std::move(n));
  }
  return info;
}

}  // namespace kiln
