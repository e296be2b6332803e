// Per-node data: one JSON format for every number Kiln can attach to a model's nodes — the time each node took in a
// profiled run (`kiln run --profile FILE`) and each node's error in a comparison (`kiln compare --node-data FILE`).
// kiln-studio overlays such a file on the graph. The format is documented in app/README.md ("Per-node data").
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "kiln/run_profile.h"
#include "kiln/status.h"

namespace kiln::app {

inline constexpr const char* kNodeDataFormat = "kiln-node-data";
inline constexpr int kNodeDataVersion = 1;

// One node's entry: where it is, and the numbers measured for it (metric name -> number, e.g. "time_ms",
// "max_abs_error"), plus optional details (`details`: any JSON object, merged into the entry as written).
struct NodeDatum {
  std::string node;     // node name as the model has it
  std::string opType;
  std::string graph = "main";  // "main" or a body path ("main/If_3.then_branch")
  std::map<std::string, double> metrics;
  nlohmann::json details = nlohmann::json::object();
};

struct NodeData {
  std::string kind;      // "profile" or "compare"
  std::string producer;  // the command that wrote it, e.g. "kiln run"
  std::string model;     // the model the node names refer to
  std::vector<NodeDatum> nodes;
  nlohmann::json summary = nlohmann::json::object();  // run-wide facts (run_ms, tolerance, ...)
  // The model's identity (kiln::identifyModel) when it could be read: a reader shows the data on that model only,
  // or maps it by node name onto its compiled twin (a ctx model whose compile record names `modelHash` as its
  // source, or the source named by `modelSourceHash`). "" in files written before Kiln recorded them.
  std::string modelHash = {};
  std::string modelSourceHash = {};  // the model is a ctx model compiled from the model with this hash
};

// Fills data.modelHash and data.modelSourceHash from the model file data.model names; leaves them "" when it
// cannot be read (the data still stands, only unbound).
void bindToModel(NodeData& data);

// The node data of a profiled run: per node time_ms and calls; execution_provider, fused_into, covers (the
// nodes a compiled partition runs) and covered_ms (their device ms, when the partition measured it) as details.
NodeData nodeDataFromProfile(const RunProfile& profile, const std::string& model);

nlohmann::json toJson(const NodeData& data);
// Reads a node-data document; INVALID_ARGUMENT naming the first thing wrong (format, version, a node without a
// name, a metric that is not a number).
Result<NodeData> nodeDataFromJson(const nlohmann::json& document);
// Writes toJson(data) to `path` through a temporary file in the same folder and a rename (never half-written).
Status writeNodeData(const std::string& path, const NodeData& data);

}  // namespace kiln::app
