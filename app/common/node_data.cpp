#include "node_data.h"

#include "json_file.h"
#include "kiln/model_info.h"

namespace kiln::app {

NodeData nodeDataFromProfile(const RunProfile& profile, const std::string& model) {
  NodeData data{"profile", "kiln run", model, {}, {{"run_ms", profile.runMs}}};
  for (const auto& timing : profile.nodes) {
    NodeDatum datum{timing.node, timing.opType, timing.graph, {{"time_ms", timing.totalMs}}, nlohmann::json::object()};
    datum.details["calls"] = timing.calls;
    datum.details["execution_provider"] = timing.executionProvider;
    if (!timing.fusedInto.empty()) datum.details["fused_into"] = timing.fusedInto;
    if (!timing.covers.empty()) datum.details["covers"] = timing.covers;
    datum.details["start_ms"] = timing.startMs;
    if (!timing.coveredMs.empty()) datum.details["covered_ms"] = timing.coveredMs;
    if (!timing.coveredStartMs.empty()) datum.details["covered_start_ms"] = timing.coveredStartMs;
    data.nodes.push_back(std::move(datum));
  }
  bindToModel(data);
  return data;
}

void bindToModel(NodeData& data) {
  if (data.model.empty()) return;
  const Result<ModelIdentity> identity = identifyModel(data.model);
  if (!identity.isOk()) return;
  data.modelHash = identity->contentHash;
  data.modelSourceHash = identity->sourceHash;
}

nlohmann::json toJson(const NodeData& data) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& datum : data.nodes) {
    nlohmann::json entry = datum.details;
    entry["node"] = datum.node;
    entry["op_type"] = datum.opType;
    entry["graph"] = datum.graph;
    entry["metrics"] = datum.metrics;
    nodes.push_back(std::move(entry));
  }
  nlohmann::json document = {{"format", kNodeDataFormat}, {"version", kNodeDataVersion}, {"kind", data.kind},
                             {"producer", data.producer}, {"model", data.model}};
  if (!data.modelHash.empty()) document["model_hash"] = data.modelHash;
  if (!data.modelSourceHash.empty()) document["model_source_hash"] = data.modelSourceHash;
  document["summary"] = data.summary;
  document["nodes"] = std::move(nodes);
  return document;
}

namespace {

Status invalid(const std::string& what) { return Status(StatusCode::INVALID_ARGUMENT, "node data: " + what); }

std::string stringOr(const nlohmann::json& object, const char* key, const std::string& fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

Result<NodeData> nodeDataFromJson(const nlohmann::json& document) {
  if (!document.is_object() || stringOr(document, "format", "") != kNodeDataFormat) {
    return invalid(std::string("not a ") + kNodeDataFormat + " document (\"format\" is missing or different)");
  }
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() || version->get<int64_t>() != kNodeDataVersion) {
    return invalid("version must be " + std::to_string(kNodeDataVersion));
  }
  auto nodes = document.find("nodes");
  if (nodes == document.end() || !nodes->is_array()) return invalid("\"nodes\" must be an array");
  NodeData data{stringOr(document, "kind", ""), stringOr(document, "producer", ""), stringOr(document, "model", ""),
                {}, document.value("summary", nlohmann::json::object()), stringOr(document, "model_hash", ""),
                stringOr(document, "model_source_hash", "")};
  for (size_t i = 0; i < nodes->size(); ++i) {
    const nlohmann::json& entry = (*nodes)[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!entry.is_object()) return invalid(where + " is not an object");
    NodeDatum datum;
    datum.node = stringOr(entry, "node", "");
    if (datum.node.empty()) return invalid(where + " has no \"node\" name");
    datum.opType = stringOr(entry, "op_type", "");
    datum.graph = stringOr(entry, "graph", "main");
    auto metrics = entry.find("metrics");
    if (metrics != entry.end()) {
      if (!metrics->is_object()) return invalid(where + ".metrics is not an object");
      for (const auto& [name, value] : metrics->items()) {
        if (!value.is_number()) return invalid(where + ".metrics." + name + " is not a number");
        datum.metrics[name] = value.get<double>();
      }
    }
    for (const auto& [key, value] : entry.items()) {
      if (key != "node" && key != "op_type" && key != "graph" && key != "metrics") datum.details[key] = value;
    }
    data.nodes.push_back(std::move(datum));
  }
  return data;
}

Status writeNodeData(const std::string& path, const NodeData& data) {
  return writeJsonFileAtomically(path, toJson(data), "node data");
}

}  // namespace kiln::app
