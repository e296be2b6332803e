// A read-only description of a model's graph for tools (CLI listings, the studio): nodes, op types, values
// with their declared or inferred types and shapes. Loading it runs shape inference but no compilation.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/value_metadata.h"
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
  // Values the node's bodies read from this graph or an enclosing one (If/Loop/Scan outer-scope captures).
  std::vector<std::string> implicitInputs = {};
  // "domain:name" when the node calls a model-local function (ModelProto.functions; its body is a SubgraphInfo
  // with that `function`), "" otherwise. The engine inlines such calls at load: the call itself never runs.
  std::string localFunction = {};
};

// One If/Loop/Scan body, or the body of a model-local function at one of its calls (or a body nested in one),
// described like the top-level graph.
struct KILN_EXPORT SubgraphInfo {
  std::string path;        // "main/If_25.else_branch", as kiln::PartitionReport and EpContextNodeInfo::graph spell it
  std::string parentPath;  // the graph holding the owner node: "main", or an enclosing body's path
  std::string ownerNode;   // the owner's name in paths: its name, or "<OpType>_<index>" when unnamed
  int64_t ownerIndex = -1;  // the owner's index in the parent graph's nodes
  std::string attribute;   // "then_branch", "else_branch", "body", "body[1]"; "domain:name" for a function body
  std::vector<ValueMetadata> inputs;   // the body's formal inputs (Loop: iteration, condition, carried values)
  std::vector<ValueMetadata> outputs;
  std::vector<std::string> outerScopeInputs;  // values it (or a body nested in it) reads from enclosing graphs
  std::vector<NodeInfo> nodes;                // topological order
  // Last, with a default: "domain:name" for the body of a model-local function called by the owner node (path
  // "main/<call>.domain:name", inputs and outputs its formal ones, typed as the call's values), "" otherwise.
  // Attributes that refer to the call's attributes read "@alpha = 0.5" (or "@alpha (not set by the call)").
  std::string function = {};
};

// An initializer or a Constant node's value: what a viewer shows instead of drawing the constant as a node.
struct KILN_EXPORT ConstantInfo {
  std::string name;
  DataType dtype = DataType::UNDEFINED;
  std::vector<int64_t> shape;
  std::string preview;  // the first values: "[0.5, -1, 3, ...]"; "" for types not shown (strings are quoted)
  bool hasRange = false;  // numeric with at least one element
  double minimum = 0, maximum = 0, mean = 0;  // over every element, or an even sample of 2^20 for bigger tensors
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
  // Last, with defaults, so existing aggregate initializations stay complete.
  std::vector<SubgraphInfo> subgraphs = {};             // every body, depth-first, parents before children
  std::map<std::string, ConstantInfo> constants = {};  // initializers and Constant outputs of every graph
};

// What a model file is, for binding data to it (a profile, a comparison, an overlay): the content hash a compile
// record stores for its source (XXH3-64 hex of the model's bytes, then of each external data file it reads), and
// for a ctx model with a compile record, the record's hash of the model it was compiled from and where that model
// is (the record's path resolved against the ctx model's folder; the file may since have moved).
struct KILN_EXPORT ModelIdentity {
  std::string contentHash;
  std::string sourceHash;   // "" unless a ctx model with a compile record
  std::string sourceModel;  // "" unless a ctx model with a compile record
};

// The identity of the model at `path`: NO_SUCHFILE when it (or an external data file) cannot be read,
// INVALID_PROTOBUF when it is not a model. Reads every external data file, so it costs a pass over the weights.
KILN_EXPORT Result<ModelIdentity> identifyModel(const std::string& path);

// Loads `path` (external data included), runs ONNX shape inference and describes the top-level graph, every
// subgraph body and every constant.
KILN_EXPORT Result<ModelInfo> inspectModel(const std::string& path);
// As inspectModel, with the shapes of the named inputs fixed first, so shape inference gives concrete dimensions
// downstream (instead of symbolic ones such as "unk__77"). The shapes are checked as a session checks
// SessionOptions::setInputShape: INVALID_ARGUMENT for a name that is not a model input, another rank or a fixed
// dimension of another size. No shapes: inspectModel(path).
KILN_EXPORT Result<ModelInfo> inspectModel(const std::string& path,
                                           const std::map<std::string, std::vector<int64_t>>& inputShapes);

}  // namespace kiln
