// Weightless EPContext (ep.enable_weightless_ep_context_nodes=1, or onnxruntime 1.29's ep.enable_weightless): the
// context binary stores no weight bytes the source model holds. Its WEIGHT_REFS section names each such weight
// (initializer or Constant node value, by name and content hash) and where the source model was, relative to the
// ctx model; a load reads the source, checks every hash and takes the bytes from there, and kernels prepack their
// constants again (reported as weight_prepack_ms and weights_prepacked).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "kiln/timings.h"

namespace kiln::epctx {

// The weights of the model file at `path` by name: initializers and Constant node `value`s of every graph,
// subgraphs included (the first of a name wins), external data read. NO_SUCHFILE when missing.
Result<std::map<std::string, Tensor>> sourceModelWeights(const std::string& path);

// Compile side: what BinaryContents needs to write a weightless binary.
struct WeightlessSources {
  std::vector<ctxbin::WeightSourceModel> sources;
  ctxbin::ExternalWeightFinder finder;
};
// Reads the source models (one, or a sharing group's members in order) of a ctx model written to `ctxFolder`.
// `fp16` (kiln.vulkan.fp16=1) also matches float32 weights stored as float16. Weights under 64 bytes are stored.
// INVALID_ARGUMENT when a source is not a file (a model compiled from memory names none).
Result<WeightlessSources> weightlessSourcesFor(const std::vector<std::string>& sourcePaths, const std::string& ctxFolder,
                                               bool fp16);

// Load side: the weights `binary` refers to, read from its source models: `overridePath`
// (ep.context_source_model_path: for a single source, or the source of that file name) first, else the recorded
// path relative to `baseFolder` (the ctx model's folder), else the recorded absolute path. NO_SUCHFILE when no
// source is there; INVALID_GRAPH when a weight is missing or its content hash differs (the source changed).
// Reading and checking adds to binary_read_ms, float16 conversion to weight_prepack_ms.
Result<ctxbin::ExternalBlobs> resolveWeightRefs(const ctxbin::ContextBinary& binary, const std::string& baseFolder,
                                                const std::string& overridePath, SessionTimings* timings);

// The partitions of `binary`; a weightless binary's weights resolved (resolveWeightRefs) when `resolve`, else
// read as type and shape only.
Result<std::vector<CompiledPartition>> decodePartitions(const ctxbin::ContextBinary& binary, bool resolve,
                                                        const std::string& baseFolder, const std::string& overridePath,
                                                        SessionTimings* timings);

}  // namespace kiln::epctx
