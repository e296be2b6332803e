#include "python_data.h"

#include <pybind11/stl.h>

#include "engine_json.h"

namespace py = pybind11;

namespace kiln::python {
// File-local overloads (static, so they share the overload set with the header's).
static py::dict toPython(const NodeInfo& node);
static py::dict toPython(const EpContextNodeInfo& node);
static py::dict toPython(const ContextBinaryGraph& graph);
static py::dict toPython(const ContextBinarySection& section);

template <class T>
py::list listOf(const std::vector<T>& items) {
  py::list result;
  for (const T& item : items) result.append(toPython(item));
  return result;
}

static py::dict toPython(const NodeInfo& node) {
  py::dict d;
  d["name"] = node.name;
  d["op_type"] = node.opType;
  d["domain"] = node.domain;
  d["inputs"] = node.inputs;
  d["outputs"] = node.outputs;
  py::dict attributes;
  for (const auto& [name, text] : node.attributes) attributes[py::str(name)] = text;
  d["attributes"] = attributes;
  d["subgraphs"] = node.subgraphNames;
  return d;
}

static py::dict toPython(const EpContextNodeInfo& node) {
  py::dict d;
  d["name"] = node.name;
  d["graph"] = node.graph;
  d["source"] = node.source;
  d["vulkan"] = node.vulkan;
  d["main_context"] = node.mainContext;
  d["embed_mode"] = node.embedMode;
  d["cache_context"] = node.cacheContext;
  d["embedded"] = node.embedded;
  d["payload_offset"] = node.payloadOffset;
  d["payload_size"] = node.payloadSize;
  d["partition_name"] = node.partitionName;
  d["inputs"] = node.inputs;
  d["outputs"] = node.outputs;
  d["binary"] = node.binary;
  d["problem"] = node.problem;
  return d;
}

// The dict of `json` (app/common/engine_json.h: the objects kiln's JSON prints), so both faces share one schema.
static py::dict fromJson(const nlohmann::json& json) {
  return py::module_::import("json").attr("loads")(json.dump());
}

static py::dict toPython(const ContextBinaryGraph& graph) { return fromJson(app::toJson(graph)); }

static py::dict toPython(const ContextBinarySection& section) { return fromJson(app::toJson(section)); }

py::dict toPython(const ValueMetadata& value) { return fromJson(app::toJson(value)); }

py::dict toPython(const ModelInfo& info) {
  py::dict d;
  d["file_kind"] = "model";
  d["path"] = info.path;
  d["ir_version"] = info.irVersion;
  d["opset_imports"] = info.opsetImports;
  d["producer_name"] = info.producerName;
  d["inputs"] = listOf(info.inputs);
  d["outputs"] = listOf(info.outputs);
  d["nodes"] = listOf(info.nodes);
  d["initializer_count"] = info.initializerCount;
  d["initializer_bytes"] = info.initializerBytes;
  return d;
}

py::dict toPython(const EpContextModelInfo& info) {
  py::dict d;
  d["file_kind"] = "ctx_model";
  d["path"] = info.path;
  d["inputs"] = listOf(info.inputs);
  d["outputs"] = listOf(info.outputs);
  py::dict metadata;
  for (const auto& [key, value] : info.metadata) metadata[py::str(key)] = value;
  d["metadata"] = metadata;
  d["other_nodes"] = info.otherNodes;
  d["nodes"] = listOf(info.nodes);
  d["initializers"] = info.initializers;
  py::dict binaries;
  for (const auto& [key, binary] : info.binaries) binaries[py::str(key)] = toPython(binary);
  d["binaries"] = binaries;
  d["problems"] = info.problems;
  return d;
}

py::dict toPython(const ContextBinaryInfo& info) {
  py::dict d;
  d["file_kind"] = "context_binary";
  d["path"] = info.path;
  d["file_size"] = info.fileSize;
  d["format_version"] = info.formatVersion;
  d["producer_engine_version"] = info.producerEngineVersion;
  d["readable_engine_versions"] = info.readableEngineVersions;
  d["target"] = info.target;
  d["device_name"] = info.deviceName;
  d["driver_name"] = info.driverName;
  d["driver_info"] = info.driverInfo;
  d["api_version"] = info.apiVersion;
  d["pipeline_cache_uuid"] = info.pipelineCacheUuid;
  d["vendor_id"] = info.vendorId;
  d["device_id"] = info.deviceId;
  d["required_features"] = info.requiredFeatures;
  d["subgroup_size"] = info.subgroupSize;
  d["sections"] = listOf(info.sections);
  d["graphs"] = listOf(info.graphs);
  d["spirv_modules"] = info.spirvModules;
  d["spirv_bytes"] = info.spirvBytes;
  py::list pipelines;  // as kiln inspect --json's spirv.pipelines
  for (const auto& p : info.pipelines) {
    py::list nodes;
    for (const auto& n : p.nodes) {
      py::dict node;
      node["graph"] = n.graph;
      node["node_index"] = n.nodeIndex;
      node["node"] = n.node;
      nodes.append(node);
    }
    py::dict pipeline;
    pipeline["key"] = p.key;
    pipeline["bytes"] = p.bytes;
    pipeline["graphs"] = p.graphs;
    pipeline["nodes"] = nodes;
    pipelines.append(pipeline);
  }
  d["spirv_pipelines"] = pipelines;
  d["pipeline_users_recorded"] = info.pipelineUsersRecorded;
  d["driver_cache_bytes"] = info.driverCacheBytes;
  d["weight_blobs"] = info.weightBlobs;
  d["weight_bytes"] = info.weightBytes;
  d["weightless"] = info.weightless;          // refers to source models' weights (ep.enable_weightless_ep_context_nodes)
  d["weight_sources"] = info.weightSources;
  return d;
}

py::dict toPython(const CompatibilityVerdict& verdict) {
  py::dict d;
  d["compatibility"] = compatibilityName(verdict.compatibility);
  d["reasons"] = verdict.reasons;
  d["against"] = verdict.against;
  return d;
}

py::dict toPython(const MergeResult& result) {
  py::dict d;
  d["output_model_path"] = result.outputModelPath;
  d["binary_path"] = result.binaryPath;
  d["ep_context_nodes"] = result.epContextNodes;
  d["binary"] = toPython(result.binary);
  return d;
}

py::dict toPython(const VulkanDeviceDescription& device) {
  py::dict d;
  d["index"] = device.index;
  d["name"] = device.name;
  d["type"] = vulkanDeviceTypeName(device.type);
  d["vendor_id"] = device.vendorId;
  d["device_id"] = device.deviceId;
  d["api_version"] = device.apiVersion;
  d["driver_name"] = device.driverName;
  d["driver_info"] = device.driverInfo;
  d["pipeline_cache_uuid"] = device.pipelineCacheUuid;
  d["subgroup_size"] = device.subgroupSize;
  d["shader_float16"] = device.shaderFloat16;
  d["device_local_bytes"] = device.deviceLocalBytes;
  d["used_by_default"] = device.usedByDefault;
  return d;
}

py::dict toPython(const ModelCompatibility& compatibility) {
  py::dict d;
  // The keys of `kiln check --json` (app/cli/cmd_check.cpp), plus the raw compatibility info.
  d["compatibility"] = compiledModelCompatibilityName(compatibility.state);
  d["verdict"] =
      compatibility.verdict ? py::object(py::str(compatibilityName(*compatibility.verdict))) : py::none();
  d["file_kind"] = compatibility.fileKind;
  d["against"] = compatibility.against;
  d["reasons"] = compatibility.reasons;
  d["compatibility_info"] = compatibility.compatibilityInfo;
  d["answered_from"] = compatibility.fromMetadata ? "metadata" : compatibility.verdict ? "binary" : "model";
  d["compile_record"] = compatibility.compileRecord;
  d["source_checked"] = compatibility.sourceChecked;
  return d;
}

}  // namespace kiln::python
