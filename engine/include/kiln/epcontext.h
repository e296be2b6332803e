// EPContext models (<stem>_ctx.onnx) as files: what they hold, followed to their context binaries, and merging
// several into one. Generating them is kiln/compiler.h; running them is Session::create.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/context_binary.h"
#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

// One com.microsoft EPContext node, its schema attributes as written.
struct EpContextNodeInfo {
  std::string name;
  std::string graph;   // "main", or the body it sits in ("main/If_0.then_branch")
  std::string source;  // "" when the node has none
  bool vulkan = false;  // the Vulkan EP claims it (source Vulkan, VulkanExecutionProvider or none); else foreign
  int64_t mainContext = 1, embedMode = 1, maxSize = 0;
  std::string cacheContext;  // the relative path (embed mode 0) or "(embedded, N bytes)"
  std::string partitionName, sdkVersion, hardwareArchitecture, onnxModelFilename, notes;
  std::vector<std::string> inputs, outputs;
  std::string binary;   // key into EpContextModelInfo::binaries holding its graph ("" when none does)
  std::string problem;  // why the node cannot be followed (missing or escaping binary, corrupt, no such graph)
};

struct EpContextModelInfo {
  std::string path;
  std::vector<ValueMetadata> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> metadata;
  int64_t otherNodes = 0;  // nodes that are not EPContext nodes (CPU fallback), all graphs
  std::vector<EpContextNodeInfo> nodes;
  std::map<std::string, ContextBinaryInfo> binaries;  // by resolved path, or "embedded in '<node>'"
  std::vector<std::string> problems;                  // model-level: a binary that does not match its recorded id
};

// Reads an EPContext model and follows every EPContext node to its binary (embedded or not). Foreign nodes (QNN,
// OpenVINO, TensorRT sources) are reported, not refused; a binary that cannot be followed is reported in the
// node's `problem`. NO_SUCHFILE / INVALID_PROTOBUF when the model itself cannot be read.
Result<EpContextModelInfo> inspectEpContextModel(const std::string& path);

struct MergeInput {
  std::string ctxModelPath;
  std::string prefix;  // applied to node names, value names, partition names and graph names
};

struct MergeResult {
  std::string outputModelPath, binaryPath;
  int epContextNodes = 0;
  ContextBinaryInfo binary;  // the combined binary as written
};

// One model holding the EPContext nodes (and CPU-fallback nodes) of every input, names prefixed per input; each
// `connections` entry ("a_out", "b_in": prefixed names) feeds an output of one input to a graph input of another
// (which stops being a graph input). Writes `outputPath` and one new binary <OUT stem>_vulkan.bin beside it with
// weights deduplicated across the inputs; the inputs are never modified. INVALID_ARGUMENT for name conflicts after
// prefixing, bad connections, or outputs that would overwrite an input, all before anything is written.
Result<MergeResult> mergeEpContextModels(const std::vector<MergeInput>& inputs, const std::string& outputPath,
                                         const std::vector<std::pair<std::string, std::string>>& connections = {});

}  // namespace kiln
