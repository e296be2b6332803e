// The context binary (<stem>_vulkan.bin): what a compiled model's EPContext nodes point to. This header is its
// public view: header fields, section table, graphs, SPIR-V, weights and the compatibility verdict against a
// device or a device profile, all computable without creating a session. The byte layout is versioned by the
// header's format version; this API is the supported way to read it.
#pragma once

#include "kiln/export.h"
#include "kiln/value_metadata.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// How a binary fits a device: `optimal` (same device and driver: the driver pipeline cache is
// used), `compatible` (the SPIR-V and features fit: pipelines are recreated), `unsupported` (format or engine
// version, or a required feature or limit is missing: loading fails with INVALID_GRAPH).
enum class Compatibility { OPTIMAL, COMPATIBLE, UNSUPPORTED };
// "optimal", "compatible", "unsupported".
KILN_EXPORT const char* compatibilityName(Compatibility value);

struct KILN_EXPORT CompatibilityVerdict {
  Compatibility compatibility = Compatibility::UNSUPPORTED;
  std::vector<std::string> reasons;  // why not optimal (empty when optimal)
  std::string against;               // "device 0 (llvmpipe ...)" or "profile path/x.json"
};

struct KILN_EXPORT ContextBinarySection {
  std::string kind;  // "device", "graphs", "spirv", "driver_cache", "weights", "compile_record", "weight_refs",
                     // "tuning", "pipeline_users"
  uint64_t offset = 0, size = 0;
  std::string hash;  // xxHash3-64, 16 hex digits
  uint64_t items = 0;
};

// One autotune choice stored in a binary (kiln compile --autotune): the node, the candidate configuration chosen
// and every candidate's best measured time on the compiling device.
struct KILN_EXPORT ContextBinaryTunedKernel {
  int64_t nodeIndex = 0;
  std::string node;    // the node's label
  std::string chosen;  // candidate name, e.g. "8px x 2cb" (Conv tile) or "local 128" (workgroup size)
  double chosenMs = 0;
  std::vector<std::pair<std::string, double>> candidates;  // name -> ms, in the order they were timed
};

struct KILN_EXPORT ContextBinaryGraph {
  std::string name;                // the partition name (EPContext nodes refer to it)
  std::string executionProvider;
  std::vector<std::string> inputs, outputs;
  // The types the graph's inputs and outputs were compiled for (by name; initializers it holds are not listed).
  std::vector<ValueMetadata> valueTypes;
  int64_t nodes = 0, hostNodes = 0;  // host nodes: shape arithmetic evaluated on the CPU while recording
  int64_t initializers = 0, prepackedConstants = 0;
  int64_t spirvModules = 0;
  std::vector<std::string> opTypes;  // distinct op types, sorted
  std::vector<ContextBinaryTunedKernel> tuning;  // stored autotune choices (applied at load, no tuning there)
  std::string tuningNote;  // why this graph's kernels keep their defaults although autotune was requested
  // What its EP stores of it in the EP's own format (the provider_data section, format 1.4), and that data as the
  // EP describes it: (label, value) pairs, empty when the EP is not one this build can create.
  int64_t providerDataBytes = 0;
  std::vector<std::pair<std::string, std::string>> providerDetails;
};

// A node whose kernel dispatches a pipeline: its compiled partition (the name EPContext nodes refer to), and the
// node in that partition's graph (after device fusions) by index and name.
struct KILN_EXPORT ContextBinaryNodeRef {
  std::string graph;
  int64_t nodeIndex = 0;
  std::string node;  // "" for an unnamed node
};

// One SPIR-V module of a binary (the shader of one compute pipeline), its size and the nodes that dispatch it.
struct KILN_EXPORT ContextBinaryPipeline {
  std::string key;  // the shader variant key
  uint64_t bytes = 0;
  std::vector<std::string> graphs;         // partitions whose kernels dispatch it
  std::vector<ContextBinaryNodeRef> nodes;  // empty when the binary does not record users (pipelineUsersRecorded)
};

// One weight a weightless binary takes from a source model.
struct KILN_EXPORT ContextBinaryWeightRef {
  std::string name;       // initializer or Constant output (for a fold: the BatchNormalization's output)
  std::string source;     // the source model as recorded (relative to the ctx model's folder)
  std::string transform;  // "none", "float16", "bn_fold_weight", "bn_fold_bias" (+ "_float16")
  uint64_t bytes = 0;     // what the graphs read
};

struct KILN_EXPORT ContextBinaryInfo {
  std::string path;
  uint64_t fileSize = 0;
  std::string formatVersion;           // "1.0"
  std::string producerEngineVersion;   // engine that wrote it
  std::string readableEngineVersions;  // "0.1.0 - 0.1023.1023"
  std::string target;                  // "device" (compiled on a live device) or "profile" (cross-compiled)
  // Producer device identity (names come from the stored device profile; the header holds their hashes).
  std::string deviceName, driverName, driverInfo, apiVersion, pipelineCacheUuid;
  uint32_t vendorId = 0, deviceId = 0, driverId = 0, driverVersion = 0;
  // What the SPIR-V needs from a device.
  std::vector<std::string> requiredFeatures;
  uint32_t subgroupSize = 0, requiredWorkgroupInvocations = 0, requiredPushConstantBytes = 0;
  std::vector<ContextBinarySection> sections;
  std::vector<ContextBinaryGraph> graphs;
  std::vector<std::string> spirvModules;  // variant keys
  uint64_t spirvBytes = 0;
  std::vector<ContextBinaryPipeline> pipelines;  // one per SPIR-V module, in section order
  // Whether the binary records which nodes dispatch each pipeline (a pipeline_users section, format 1.2): binaries
  // written before it do not, and their pipelines list no nodes.
  bool pipelineUsersRecorded = false;
  uint64_t driverCacheBytes = 0;  // 0 when the binary has no driver pipeline cache
  // Weights: distinct blobs stored, references to them, and the bytes deduplication saved.
  uint64_t weightBlobs = 0, weightReferences = 0, weightBytes = 0, weightBytesReferenced = 0;
  // "off": compiled without autotune (no tuning section); "tuned": choices are stored (see each graph);
  // "defaults": autotune was requested but nothing is stored (a cross-compile: each graph's tuningNote says why).
  std::string autotune = "off";
  // Weightless binaries (ep.enable_weightless_ep_context_nodes=1): the source models whose weights they refer to
  // (as recorded: relative to the ctx model's folder), how many weights and bytes, and the prepacked constants
  // derived again at load.
  bool weightless = false;
  std::vector<std::string> weightSources;
  uint64_t externalWeights = 0, externalWeightBytes = 0, derivedConstants = 0;
  std::vector<ContextBinaryWeightRef> weightRefs;  // every weight referred to, in blob order
  std::string compileRecord;  // the compile record the binary carries (JSON, format 1.1); "" when none
};

// Reads and validates a context binary (every offset, size and hash). NO_SUCHFILE when missing; INVALID_GRAPH with
// the reason when truncated, corrupt or of a format this engine cannot read.
KILN_EXPORT Result<ContextBinaryInfo> inspectContextBinary(const std::string& path);

// The verdict of the binary at `path` against live Vulkan device `deviceSelector` (index or name substring; empty:
// the device a compile would pick, lavapipe included). A binary that cannot be read at all is INVALID_GRAPH; one
// of another format or engine version is an `unsupported` verdict.
KILN_EXPORT Result<CompatibilityVerdict> checkContextBinary(const std::string& path, const std::string& deviceSelector = "");
// The verdict against the device profile at `profilePath` (see kiln/device.h).
KILN_EXPORT Result<CompatibilityVerdict> checkContextBinaryAgainstProfile(const std::string& path, const std::string& profilePath);

// The same three for a binary in memory (an embedded ep_cache_context payload, say); `origin` is the path the
// description reports and error messages name.
KILN_EXPORT Result<ContextBinaryInfo> inspectContextBinary(std::span<const std::byte> bytes, const std::string& origin);
KILN_EXPORT Result<CompatibilityVerdict> checkContextBinary(std::span<const std::byte> bytes, const std::string& origin,
                                                const std::string& deviceSelector);
KILN_EXPORT Result<CompatibilityVerdict> checkContextBinaryAgainstProfile(std::span<const std::byte> bytes,
                                                              const std::string& origin, const std::string& profilePath);

}  // namespace kiln
