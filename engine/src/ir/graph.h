// Kiln's in-memory model: graphs, nodes, attributes, values, initializers. Built from ONNX protobuf by
// onnx/model_loader; no protobuf types appear here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"
#include "kiln/value_metadata.h"

namespace kiln::ir {

struct Graph;

enum class AttributeType { UNDEFINED, FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS, STRINGS, TENSORS, GRAPHS, OTHER };

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::UNDEFINED;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

using ValueKind = ::kiln::ValueKind;  // kiln/value.h

// Declared or inferred type of a value.
struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::TENSOR;
  DataType dtype = DataType::UNDEFINED;  // element type (of the tensor, or of the sequence's tensors)
  std::optional<std::vector<Dimension>> shape;  // nullopt when unknown rank
};

struct Node {
  std::string name;
  std::string opType;
  std::string domain;  // "" for ai.onnx
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attributes;

  const Attribute* attribute(const std::string& key) const;
  bool hasAttribute(const std::string& key) const { return attribute(key) != nullptr; }
  int64_t attrInt(const std::string& key, int64_t fallback) const;
  float attrFloat(const std::string& key, float fallback) const;
  std::string attrString(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attrInts(const std::string& key, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attrFloats(const std::string& key, std::vector<float> fallback = {}) const;
  std::vector<std::string> attrStrings(const std::string& key, std::vector<std::string> fallback = {}) const;
  // The subgraph attribute `key` (If: then_branch/else_branch, Loop/Scan: body), or nullptr.
  const Graph* subgraph(const std::string& key) const;
  // "name (OpType)" or "OpType #index" for diagnostics.
  std::string label() const;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;                  // in topological order once loaded
  std::vector<ValueInfo> inputs;            // graph inputs (may include initializer names, as in old models)
  std::vector<ValueInfo> outputs;
  std::map<std::string, ValueInfo> valueInfo;       // intermediate values (from the model and shape inference)
  std::map<std::string, Tensor> initializers;

  bool isInitializer(const std::string& value) const { return initializers.count(value) != 0; }
  // The declared or inferred type of a value, if known.
  const ValueInfo* findValueInfo(const std::string& value) const;
  // Names a node's subgraphs read from enclosing scopes (recursively), excluding names defined inside them.
  std::vector<std::string> implicitInputs(const Node& node) const;
};

// onnxruntime's contrib operator domain (kernels of both EPs register there).
inline constexpr const char* kMicrosoftDomain = "com.microsoft";

struct Model {
  int64_t irVersion = 0;
  std::map<std::string, int64_t> opsetImports;  // domain ("" = ai.onnx) -> version
  std::string producerName;
  std::string producerVersion;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::shared_ptr<Graph> graph;

  // The imported opset version of `domain` ("" and "ai.onnx" are the same), or 0 when not imported.
  int64_t opsetVersion(const std::string& domain) const;
};

// The public description (kiln::ValueMetadata) of a value's declared or inferred type.
ValueMetadata toValueMetadata(const ValueInfo& info);

// Orders `graph.nodes` topologically (stable for already sorted graphs). Names consumed by subgraphs count as
// inputs of the node that owns the subgraph. INVALID_GRAPH on a cycle or a value with no producer.
Status sortTopologically(Graph& graph, const std::vector<std::string>& outerScopeNames = {});

}  // namespace kiln::ir
