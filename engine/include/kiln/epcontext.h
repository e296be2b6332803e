// EPContext models (<stem>_ctx.onnx) as files: what they hold, followed to their context binaries, and merging
// several into one. Generating them is kiln/compiler.h; running them is Session::create.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/context_binary.h"
#include "kiln/value_metadata.h"
#include "kiln/status.h"

namespace kiln {

// Whether a node of op type `opType` in `domain` is an EPContext node (com.microsoft EPContext).
KILN_EXPORT bool isEpContextNode(const std::string& opType, const std::string& domain);

// One com.microsoft EPContext node, its schema attributes as written.
struct KILN_EXPORT EpContextNodeInfo {
  std::string name;
  std::string graph;   // "main", or the body it sits in ("main/If_0.then_branch")
  std::string source;  // "" when the node has none
  // Kiln reads it: the Vulkan EP claims it (source Vulkan, VulkanExecutionProvider or none) or Kiln wrote it for
  // another of its EPs (notes say producer kiln: its binary is a Kiln context binary). Else foreign.
  bool vulkan = false;
  int64_t mainContext = 1, embedMode = 1, maxSize = 0;
  std::string cacheContext;  // the relative path (embed mode 0) or "(embedded, N bytes)"
  // A main context that carries its binary in ep_cache_context (embed mode 1), and where those bytes lie in the
  // serialized model (the .onnx file, or the bytes inspected): a hex view can read them in place.
  bool embedded = false;
  uint64_t payloadOffset = 0, payloadSize = 0;
  std::string partitionName, sdkVersion, hardwareArchitecture, onnxModelFilename, notes;
  std::vector<std::string> inputs, outputs;
  std::string binary;   // key into EpContextModelInfo::binaries holding its graph ("" when none does)
  std::string problem;  // why the node cannot be followed (missing or escaping binary, corrupt, no such graph)
};

// One node of a ctx model's main graph, EPContext or not: what a merge prefixes and checks.
struct KILN_EXPORT MainGraphNode {
  std::string name, opType, domain;
  std::vector<std::string> inputs, outputs;
};

struct KILN_EXPORT EpContextModelInfo {
  std::string path;
  std::vector<ValueMetadata> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> metadata;
  int64_t otherNodes = 0;  // nodes that are not EPContext nodes (CPU fallback), all graphs
  std::vector<EpContextNodeInfo> nodes;
  std::vector<MainGraphNode> mainGraphNodes;  // every node of the main graph, in graph order
  std::vector<std::string> initializers;      // the main graph's initializers that are not graph inputs
  std::map<std::string, ContextBinaryInfo> binaries;  // by resolved path, or "embedded in '<node>'"
  std::vector<std::string> problems;                  // model-level: a binary that does not match its recorded id
};

// Reads an EPContext model and follows every EPContext node to its binary (embedded or not). Foreign nodes (QNN,
// OpenVINO, TensorRT sources) are reported, not refused; a binary that cannot be followed is reported in the
// node's `problem`. NO_SUCHFILE / INVALID_PROTOBUF when the model itself cannot be read.
KILN_EXPORT Result<EpContextModelInfo> inspectEpContextModel(const std::string& path);
// The same for a ctx model in memory (`path` of the result empty); ep_cache_context paths resolve against
// `baseFolder` (empty: only embedded binaries are followed, a file reference is the node's `problem`).
KILN_EXPORT Result<EpContextModelInfo> inspectEpContextModel(std::span<const std::byte> modelBytes, const std::string& baseFolder = "");

struct KILN_EXPORT MergeInput {
  std::string ctxModelPath;
  std::string prefix;  // applied to node names, value names, partition names and graph names
};

// One input of a merge plan: a ctx model as inspectEpContextModel read it, and its prefix.
struct KILN_EXPORT MergePlanInput {
  std::shared_ptr<const EpContextModelInfo> model;  // never null
  std::string prefix;
};

// A name of the merged model (prefixed) and the input (index into the plan's inputs) it comes from.
struct KILN_EXPORT MergePlanName {
  std::string name;
  int input = 0;
};

struct KILN_EXPORT MergePlanValue {
  ValueMetadata value;  // name prefixed
  int input = 0;
};

struct KILN_EXPORT MergePlanNode {
  std::string name, opType;  // name prefixed
  bool epContext = false;
  std::string partition;  // EPContext nodes: the graph in the binary (prefixed); empty for other nodes
  std::vector<std::string> inputs, outputs;  // prefixed
  int input = 0;
};

// A connection as asked for ("a_out" feeds "b_in", prefixed names) and why it cannot be made (empty: it can).
struct KILN_EXPORT MergePlanConnection {
  std::string from, to;
  std::string problem;
};

// What mergeEpContextModels would build, and every reason it would refuse, before anything is written.
struct KILN_EXPORT MergePlan {
  std::vector<MergePlanValue> inputs, outputs;  // of the merged graph: inputs fed by a connection are not listed
  std::vector<MergePlanNode> nodes;             // every main-graph node of every input (CPU fallback included)
  std::vector<MergePlanName> initializers;      // main-graph initializers that are not graph inputs
  std::vector<MergePlanName> graphs;            // graphs of the combined binary (one per EPContext node)
  std::vector<MergePlanConnection> connections;  // in the order asked for
  std::vector<std::string> conflicts;         // "node 'x_conv' (input 2 and input 1)", sorted
  std::vector<std::string> conflictingNames;  // the names themselves, each once
  std::vector<std::string> problems;          // fewer than two inputs
  bool ok() const;
  // OK, or INVALID_ARGUMENT listing the problems, conflicts and connection problems.
  Status status() const;
};

// The merge of `inputs` (names prefixed per input) with `connections` ("a_out", "b_in": prefixed names): names
// after prefixing, values, nodes, initializers or graphs two inputs would both define, and connections that name
// no output or graph input, join one input to itself, feed one input twice or change the element type.
// It cannot fail: the inputs are read already, and every reason a merge would refuse is in the plan.
KILN_EXPORT MergePlan planMergeOfInspected(const std::vector<MergePlanInput>& inputs,
                                           const std::vector<std::pair<std::string, std::string>>& connections = {});

// planMergeOfInspected over the ctx models `inputs` name, each read with inspectEpContextModel (its errors, with
// context): a Result, because reading them can fail.
KILN_EXPORT Result<MergePlan> planMerge(const std::vector<MergeInput>& inputs,
                            const std::vector<std::pair<std::string, std::string>>& connections = {});

struct KILN_EXPORT MergeResult {
  std::string outputModelPath, binaryPath;
  int epContextNodes = 0;
  ContextBinaryInfo binary;  // the combined binary as written
};

// One model holding the EPContext nodes (and CPU-fallback nodes) of every input, names prefixed per input; each
// `connections` entry ("a_out", "b_in": prefixed names) feeds an output of one input to a graph input of another
// (which stops being a graph input). Writes `outputPath` and one new binary <OUT stem>_vulkan.bin beside it with
// weights deduplicated across the inputs; the inputs are never modified. INVALID_ARGUMENT for what planMerge
// refuses (name conflicts after prefixing, bad connections), a cycle the connections make, or outputs that would
// overwrite an input, all before anything is written.
KILN_EXPORT Result<MergeResult> mergeEpContextModels(const std::vector<MergeInput>& inputs, const std::string& outputPath,
                                         const std::vector<std::pair<std::string, std::string>>& connections = {});

}  // namespace kiln
