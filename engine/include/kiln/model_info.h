// A read-only description of a model's graph for tools (CLI listings, the studio): nodes, op types, values
// with their declared or inferred types and shapes. Loading it runs shape inference but no compilation.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

struct KILN_EXPORT NodeInfo {
  std::string name;
  std::string opType;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributeNames;
  std::vector<std::string> subgraphNames;  // attribute names holding subgraphs (If/Loop/Scan bodies)
  // Last, with a default, so existing aggregate initializations stay complete.
  // Every attribute as name -> display string, in name order: numbers as written ("3", "0.5"), strings quoted,
  // lists as "[1, 2, 3]" (elided after 16 items with the count), tensors as "float[3,4]" (never their data),
  // subgraphs as "graph 'body' (12 nodes)". A string that is long or not printable text (an EPContext node's
  // embedded ep_cache_context) is shown only as "<N bytes>", so payload bytes never reach a display as text.
  std::vector<std::pair<std::string, std::string>> attributes = {};
};

struct KILN_EXPORT ModelInfo {
  std::string path;
  int64_t irVersion = 0;
  std::map<std::string, int64_t> opsetImports;
  std::string producerName;
  std::vector<ValueMetadata> inputs;
  std::vector<ValueMetadata> outputs;
  std::vector<NodeInfo> nodes;                          // top-level graph, topological order
  std::map<std::string, ValueMetadata> values;          // every typed value: inputs, outputs, intermediates
  int64_t initializerCount = 0;
  int64_t initializerBytes = 0;
};

// Loads `path` (external data included), runs ONNX shape inference and describes the top-level graph.
KILN_EXPORT Result<ModelInfo> inspectModel(const std::string& path);

}  // namespace kiln
