// A structural diff of two ONNX models (source against optimized, v1 against v2, source against ctx): opset
// imports, graph inputs and outputs, nodes, attributes and initializers, If/Loop/Scan bodies included. What
// `kiln diff` prints and kiln-studio's model diff shows are renderings of this one structure.
#pragma once

#include "kiln/export.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// What happened to an item between model A and model B.
enum class DiffChange { ADDED, REMOVED, CHANGED };

// "added", "removed", "changed".
KILN_EXPORT const char* diffChangeName(DiffChange change);

// An imported opset whose version differs (0: not imported by that model).
struct KILN_EXPORT OpsetDiff {
  std::string domain;  // "" for ai.onnx
  DiffChange change = DiffChange::CHANGED;
  int64_t versionA = 0, versionB = 0;
};

// A graph input or output, matched by name.
struct KILN_EXPORT ValueDiff {
  std::string graph;  // "main", or a body path ("main/If_0.then_branch")
  std::string name;
  DiffChange change = DiffChange::CHANGED;
  // The declared type, "float32[1,3,N,640]" ("[?]": no shape; "sequence of ..." for non-tensors); "" on the side
  // that lacks the value.
  std::string typeA, typeB;
};

// One attribute of a matched node whose value differs. Values as text: numbers in the shortest form that reads
// back to the same value, strings quoted, lists "[0, 0, 1, 1]" (elided after 16 items with the count), tensors
// "float32[3] xxh3 <hash>", binary or long strings "<N bytes, xxh3 <hash>>". "" on the side that lacks it.
struct KILN_EXPORT AttributeDiff {
  std::string name;
  std::string valueA, valueB;
};

// A node's op, domain and connections on one side; opType "" when that side has no such node.
struct KILN_EXPORT NodeSide {
  std::string opType, domain;
  std::vector<std::string> inputs, outputs;
};

// A node added, removed or changed. Changes inside a matched node's bodies are reported as diffs of the body
// graphs (their `graph` is the body's path), not as a change of the node that owns them.
struct KILN_EXPORT NodeDiff {
  std::string graph;  // "main", or a body path ("main/If_0.then_branch")
  // The node's name; for an unnamed node "<OpType>_<index>", its index in the graph of side A (B when added).
  std::string name;
  DiffChange change = DiffChange::CHANGED;
  bool unnamed = false;
  // Unnamed on both sides, so paired by position instead of name: the k-th unnamed node of an op type in A with
  // the k-th of that op type in B.
  bool matchedByPosition = false;
  NodeSide a, b;
  bool opTypeChanged = false, inputsChanged = false, outputsChanged = false;
  std::vector<AttributeDiff> attributes;  // in name order; only those that differ
};

// An initializer added, removed or changed: element type, shape or content (XXH3-64 of its bytes).
struct KILN_EXPORT InitializerDiff {
  std::string graph;
  std::string name;
  DiffChange change = DiffChange::CHANGED;
  std::string typeA, typeB;  // "float32[16,3,3,3]"; "" on the side that lacks it
  uint64_t hashA = 0, hashB = 0;
  bool typeChanged = false;     // element type or shape differs
  bool contentChanged = false;  // same type and shape, different bytes
  // With contentChanged: how many elements differ (-1 when not counted: strings, sub-byte types).
  int64_t differingElements = -1;
  int64_t elements = 0;
};

struct KILN_EXPORT ModelDiff {
  std::string pathA, pathB;
  std::vector<OpsetDiff> opsets;
  std::vector<ValueDiff> inputs, outputs;
  std::vector<NodeDiff> nodes;
  std::vector<InitializerDiff> initializers;
  // How the diff was made where that matters to a reader (unnamed nodes paired by position); never a change.
  std::vector<std::string> notes;

  // The number of differences: one per entry of opsets, inputs, outputs, nodes and initializers.
  size_t changeCount() const {
    return opsets.size() + inputs.size() + outputs.size() + nodes.size() + initializers.size();
  }
  // True when the models do not differ in anything diffModels compares.
  bool identical() const { return changeCount() == 0; }
};

// Loads both models as written (no shape inference, local functions not inlined) and compares them: graph by graph
// from "main" into the bodies of matched nodes, nodes matched by name (unnamed ones by position and op type), inputs,
// outputs and initializers by name. Producer, metadata and ir_version are not compared. Errors are the loader's:
// NO_SUCHFILE for a missing file, INVALID_PROTOBUF when it is not ONNX, INVALID_GRAPH for a broken model.
KILN_EXPORT Result<ModelDiff> diffModels(const std::string& pathA, const std::string& pathB);

}  // namespace kiln
