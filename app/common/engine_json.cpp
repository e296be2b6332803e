#include "engine_json.h"

namespace kiln::app {

nlohmann::json toJson(const ValueMetadata& value) {
  nlohmann::json shape = nlohmann::json::array();
  for (const Dimension& dim : value.shape) {
    if (dim.isFixed()) {
      shape.push_back(dim.value);
    } else if (!dim.param.empty()) {
      shape.push_back(dim.param);
    } else {
      shape.push_back(nullptr);
    }
  }
  return {{"name", value.name},
          {"kind", valueKindName(value.kind)},
          {"dtype", static_cast<int>(value.dtype)},
          {"has_shape", value.hasShape},
          {"shape", shape}};
}

nlohmann::json toJson(const ContextBinarySection& s) {
  return {{"kind", s.kind}, {"offset", s.offset}, {"size", s.size}, {"hash", s.hash}, {"items", s.items}};
}

nlohmann::json toJson(const ContextBinaryGraph& g) {
  nlohmann::json tuning = nlohmann::json::array();
  for (const auto& k : g.tuning) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& [name, ms] : k.candidates) candidates.push_back({{"name", name}, {"ms", ms}});
    tuning.push_back({{"node_index", k.nodeIndex}, {"node", k.node}, {"chosen", k.chosen}, {"chosen_ms", k.chosenMs},
                      {"candidates", candidates}});
  }
  nlohmann::json providerDetails = nlohmann::json::object();  // the EP's own words, by label
  for (const auto& [label, value] : g.providerDetails) providerDetails[label] = value;
  nlohmann::json valueTypes = nlohmann::json::array();
  for (const auto& value : g.valueTypes) valueTypes.push_back(toJson(value));
  return {{"name", g.name},
          {"tuning", tuning},
          {"tuning_note", g.tuningNote},
          {"execution_provider", g.executionProvider},
          {"inputs", g.inputs},
          {"outputs", g.outputs},
          {"value_types", valueTypes},
          {"nodes", g.nodes},
          {"host_nodes", g.hostNodes},
          {"initializers", g.initializers},
          {"prepacked_constants", g.prepackedConstants},
          {"spirv_modules", g.spirvModules},
          {"op_types", g.opTypes},
          {"provider_data_bytes", g.providerDataBytes},
          {"provider_details", providerDetails}};
}

nlohmann::json toJson(const ContextBinaryInfo& info) {
  nlohmann::json sections = nlohmann::json::array(), graphs = nlohmann::json::array();
  for (const auto& s : info.sections) sections.push_back(toJson(s));
  for (const auto& g : info.graphs) graphs.push_back(toJson(g));
  nlohmann::json pipelines = nlohmann::json::array();
  for (const auto& p : info.pipelines) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : p.nodes) nodes.push_back({{"graph", n.graph}, {"node_index", n.nodeIndex}, {"node", n.node}});
    pipelines.push_back({{"key", p.key}, {"bytes", p.bytes}, {"graphs", p.graphs}, {"nodes", nodes}});
  }
  nlohmann::json document = {{"path", info.path},
          {"kind", "context_binary"},
          {"file_size", info.fileSize},
          {"format_version", info.formatVersion},
          {"producer_engine_version", info.producerEngineVersion},
          {"readable_engine_versions", info.readableEngineVersions},
          {"target", info.target},
          {"device",
           {{"name", info.deviceName},
            {"vendor_id", info.vendorId},
            {"device_id", info.deviceId},
            {"driver_id", info.driverId},
            {"driver_version", info.driverVersion},
            {"driver_name", info.driverName},
            {"driver_info", info.driverInfo},
            {"api_version", info.apiVersion},
            {"pipeline_cache_uuid", info.pipelineCacheUuid}}},
          {"requires",
           {{"features", info.requiredFeatures},
            {"subgroup_size", info.subgroupSize},
            {"workgroup_invocations", info.requiredWorkgroupInvocations},
            {"push_constant_bytes", info.requiredPushConstantBytes}}},
          {"sections", sections},
          {"graphs", graphs},
          {"spirv",
           {{"modules", info.spirvModules.size()},
            {"bytes", info.spirvBytes},
            {"keys", info.spirvModules},
            {"pipelines", pipelines},
            {"pipeline_users_recorded", info.pipelineUsersRecorded}}},
          {"driver_cache_bytes", info.driverCacheBytes},
          {"autotune", info.autotune},
          {"weights",
           {{"blobs", info.weightBlobs},
            {"references", info.weightReferences},
            {"bytes", info.weightBytes},
            {"bytes_referenced", info.weightBytesReferenced},
            {"bytes_saved_by_dedup", info.weightBytesReferenced - info.weightBytes}}}};
  if (info.weightless) {
    nlohmann::json refs = nlohmann::json::array();
    for (const auto& ref : info.weightRefs) {
      refs.push_back({{"name", ref.name}, {"source", ref.source}, {"transform", ref.transform}, {"bytes", ref.bytes}});
    }
    document["weightless"] = {{"sources", info.weightSources},
                              {"weights", refs},
                              {"references", info.externalWeights},
                              {"bytes", info.externalWeightBytes},
                              {"derived_constants", info.derivedConstants}};
  }
  return document;
}

nlohmann::json toJson(const CompatibilityVerdict& verdict) {
  return {{"verdict", compatibilityName(verdict.compatibility)}, {"against", verdict.against}, {"reasons", verdict.reasons}};
}

nlohmann::json toJson(const VulkanDeviceDescription& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"type", vulkanDeviceTypeName(d.type)},
          {"vendor_id", d.vendorId},
          {"device_id", d.deviceId},
          {"api_version", d.apiVersion},
          {"driver_version", d.driverVersion},
          {"driver_id", d.driverId},
          {"driver_name", d.driverName},
          {"driver_info", d.driverInfo},
          {"pipeline_cache_uuid", d.pipelineCacheUuid},
          {"used_by_default", d.usedByDefault},
          {"features",
           {{"subgroup_size", d.subgroupSize},
            {"subgroup_arithmetic", d.subgroupArithmetic},
            {"shader_float16", d.shaderFloat16},
            {"storage_buffer_16bit", d.storageBuffer16Bit},
            {"storage_buffer_8bit", d.storageBuffer8Bit},
            {"shader_int64", d.shaderInt64},
            {"push_descriptors", d.pushDescriptors},
            {"unified_memory", d.unifiedMemory},
            {"timestamp_queries", d.timestampQueries}}},
          {"limits",
           {{"max_storage_buffer_range", d.maxStorageBufferRange},
            {"device_local_bytes", d.deviceLocalBytes},
            {"max_push_constants_size", d.maxPushConstantsSize},
            {"max_compute_work_group_invocations", d.maxComputeWorkGroupInvocations}}}};
}

nlohmann::json timingsToJson(const SessionTimings& timings) {
  nlohmann::json out = nlohmann::json::object();
  forEachTiming(timings, [&](std::string_view key, double value) { out[std::string(key)] = value; });
  return out;
}

nlohmann::json countersToJson(const WorkCounters& counters) {
  nlohmann::json out = nlohmann::json::object();
  forEachCounter(counters, [&](std::string_view key, int64_t value) { out[std::string(key)] = value; });
  return out;
}

}  // namespace kiln::app
