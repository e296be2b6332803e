#include "epcontext/weightless.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "onnx/model_loader.h"
#include "ops/batch_norm_fold.h"
#include "util/file_io.h"
#include "util/float16_tensor.h"
#include "util/stopwatch.h"

namespace kiln::epctx {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSmallestReferenced = 64;  // a reference costs about this much: smaller weights are stored

std::span<const std::byte> bytesOf(const Tensor& t) {
  return {static_cast<const std::byte*>(t.rawData()), t.byteSize()};
}

void collectWeights(const ir::Graph& graph, std::map<std::string, Tensor>& out) {
  for (const auto& [name, tensor] : graph.initializers) out.emplace(name, tensor);
  for (const auto& node : graph.nodes) {
    if (node.opType == "Constant" && (node.domain.empty() || node.domain == "ai.onnx") && !node.outputs.empty()) {
      if (const ir::Attribute* value = node.attribute("value"); value && value->type == ir::AttributeType::TENSOR) {
        out.emplace(node.outputs[0], value->t);
      }
    }
    for (const auto& [key, attribute] : node.attributes) {
      if (attribute.g) collectWeights(*attribute.g, out);
      for (const auto& body : attribute.graphs) {
        if (body) collectWeights(*body, out);
      }
    }
  }
}

// A float32 view of a float32 or float16 weight, or nullopt.
std::optional<Tensor> asFloat32(const std::map<std::string, Tensor>& weights, const std::string& name) {
  auto it = weights.find(name);
  if (it == weights.end() || !it->second.rawData()) return std::nullopt;
  if (it->second.dtype() == DataType::FLOAT) return it->second;
  if (it->second.dtype() == DataType::FLOAT16) return toFloat32(it->second);
  return std::nullopt;
}

// What the Vulkan EP's Conv+BatchNormalization fusion stores for each BatchNormalization fed by a Conv or
// ConvTranspose whose parameters are all weights (device_fusions.h), by the BatchNormalization's output: the folded
// weights and bias, float16 when the Conv's weights are.
void collectFolds(const ir::Graph& graph, const std::map<std::string, Tensor>& weights,
                  std::map<std::string, std::pair<Tensor, Tensor>>& folds) {
  std::map<std::string, const ir::Node*> producer;
  for (const auto& node : graph.nodes) {
    for (const auto& out : node.outputs) producer[out] = &node;
  }
  for (const auto& bn : graph.nodes) {
    for (const auto& [key, attribute] : bn.attributes) {
      if (attribute.g) collectFolds(*attribute.g, weights, folds);
      for (const auto& body : attribute.graphs) {
        if (body) collectFolds(*body, weights, folds);
      }
    }
    if (bn.opType != "BatchNormalization" || bn.inputs.size() < 5 || bn.outputs.size() != 1 ||
        bn.attrInt("training_mode", 0) != 0) {
      continue;
    }
    auto it = producer.find(bn.inputs[0]);
    if (it == producer.end()) continue;
    const ir::Node& conv = *it->second;
    if ((conv.opType != "Conv" && conv.opType != "ConvTranspose") || conv.inputs.size() < 2) continue;
    auto w = asFloat32(weights, conv.inputs[1]);
    auto scale = asFloat32(weights, bn.inputs[1]), shift = asFloat32(weights, bn.inputs[2]);
    auto mean = asFloat32(weights, bn.inputs[3]), var = asFloat32(weights, bn.inputs[4]);
    if (!w || !scale || !shift || !mean || !var) continue;
    std::optional<Tensor> bias;
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
      bias = asFloat32(weights, conv.inputs[2]);
      if (!bias) continue;
    }
    auto folded = ops::foldBatchNormParameters(*w, bias, *scale, *shift, *mean, *var, bn.attrFloat("epsilon", 1e-5f),
                                              conv.opType == "ConvTranspose", conv.attrInt("group", 1));
    if (!folded) continue;
    if (weights.at(conv.inputs[1]).dtype() == DataType::FLOAT16) {
      folded = std::make_pair(toFloat16(folded->first), toFloat16(folded->second));
    }
    folds.emplace(bn.outputs[0], std::move(*folded));
  }
}

struct SourceContents {
  std::map<std::string, Tensor> weights;
  std::map<std::string, std::pair<Tensor, Tensor>> folds;  // by BatchNormalization output
  double foldMs = 0;                                        // time collectFolds took
};

Result<SourceContents> readSource(const std::string& path, bool withFolds) {
  onnx_io::LoadOptions load;
  load.runShapeInference = false;
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, load));
  SourceContents contents;
  if (!loaded.model.graph) return contents;
  collectWeights(*loaded.model.graph, contents.weights);
  if (withFolds) {
    Stopwatch foldClock;
    collectFolds(*loaded.model.graph, contents.weights, contents.folds);
    contents.foldMs = foldClock.elapsedMs();
  }
  return contents;
}

bool isFold(ctxbin::WeightTransform t) {
  return t != ctxbin::WeightTransform::NONE && t != ctxbin::WeightTransform::FLOAT16;
}

bool usable(const Tensor& t) {
  return t.dtype() != DataType::STRING && t.rawData() != nullptr && t.byteSize() >= kSmallestReferenced;
}

struct IndexEntry {
  ctxbin::WeightRef ref;  // blob fields unset
  Tensor bytes;           // what the blob must equal
};

// The source model for `source`, as found now (see resolveWeightRefs).
Result<std::string> locateSource(const ctxbin::WeightSourceModel& source, size_t sourceCount,
                                 const std::string& baseFolder, const std::string& overridePath) {
  const std::string fileName = fs::path(source.absolutePath).filename().string();
  if (!overridePath.empty() && (sourceCount == 1 || fs::path(overridePath).filename().string() == fileName)) {
    if (Status regular = checkRegularFile(overridePath); !regular.isOk()) {
      return Status(StatusCode::NO_SUCHFILE, "the source model of a weightless context binary, '" + overridePath +
                                                 "' (ep.context_source_model_path): " + regular.message());
    }
    return overridePath;
  }
  std::vector<std::string> tried;
  if (!baseFolder.empty() && !source.relativePath.empty()) tried.push_back((fs::path(baseFolder) / source.relativePath).string());
  if (!source.absolutePath.empty()) tried.push_back(source.absolutePath);
  for (const auto& path : tried) {
    if (checkRegularFile(path).isOk()) return path;
  }
  std::string looked;
  for (const auto& path : tried) looked += (looked.empty() ? "" : ", ") + path;
  return Status(StatusCode::NO_SUCHFILE, "the weightless context binary takes its weights from the source model '" +
                                             source.relativePath + "', which is not there (looked at " + looked +
                                             "): set ep.context_source_model_path to it");
}

}  // namespace

Result<std::map<std::string, Tensor>> sourceModelWeights(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(SourceContents contents, readSource(path, false));
  return std::move(contents.weights);
}

Result<WeightlessSources> weightlessSourcesFor(const std::vector<std::string>& sourcePaths, const std::string& ctxFolder,
                                               bool fp16) {
  auto index = std::make_shared<std::multimap<uint64_t, IndexEntry>>();
  WeightlessSources result;
  for (size_t s = 0; s < sourcePaths.size(); ++s) {
    const std::string& path = sourcePaths[s];
    if (path.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT, "a weightless context binary refers to its source model's weights, "
                                                  "but the model was compiled from memory: compile it from a file");
    }
    auto contents = readSource(path, true);
    if (!contents.isOk()) return contents.status().withContext("reading the source model's weights (weightless)");
    std::error_code error;
    const fs::path absolute = fs::absolute(path, error);
    const fs::path relative = fs::absolute(absolute, error).lexically_normal().lexically_relative(
        fs::absolute(ctxFolder.empty() ? "." : ctxFolder, error).lexically_normal());
    result.sources.push_back({relative.empty() ? absolute.string() : relative.string(), absolute.lexically_normal().string()});
    // Every weight as is and, under fp16, as float16; every BatchNormalization fold as the fusion stores it.
    auto add = [&](const std::string& name, const Tensor& tensor, ctxbin::WeightTransform plain, ctxbin::WeightTransform half) {
      if (!usable(tensor)) return;
      ctxbin::WeightRef ref;
      ref.source = static_cast<uint32_t>(s);
      ref.name = name;
      ref.transform = plain;
      ref.sourceHash = ctxbin::contentHash(bytesOf(tensor));
      ref.sourceBytes = tensor.byteSize();
      index->emplace(ref.sourceHash, IndexEntry{ref, tensor});
      if (fp16 && tensor.dtype() == DataType::FLOAT) {
        Tensor converted = toFloat16(tensor);
        ref.transform = half;
        const uint64_t hash = ctxbin::contentHash(bytesOf(converted));  // before the move below
        index->emplace(hash, IndexEntry{ref, std::move(converted)});
      }
    };
    using T = ctxbin::WeightTransform;
    for (const auto& [name, tensor] : contents->weights) add(name, tensor, T::NONE, T::FLOAT16);
    for (const auto& [name, fold] : contents->folds) {
      add(name, fold.first, T::BN_FOLD_WEIGHT, T::BN_FOLD_WEIGHT_FLOAT16);
      add(name, fold.second, T::BN_FOLD_BIAS, T::BN_FOLD_BIAS_FLOAT16);
    }
  }
  result.finder = [index](std::span<const std::byte> bytes, uint64_t hash) -> std::optional<ctxbin::WeightRef> {
    if (bytes.size() < kSmallestReferenced) return std::nullopt;
    auto [first, last] = index->equal_range(hash);
    for (auto it = first; it != last; ++it) {
      const Tensor& candidate = it->second.bytes;
      if (candidate.byteSize() == bytes.size() && std::memcmp(candidate.rawData(), bytes.data(), bytes.size()) == 0) {
        return it->second.ref;
      }
    }
    return std::nullopt;
  };
  return result;
}

Result<ctxbin::ExternalBlobs> resolveWeightRefs(const ctxbin::ContextBinary& binary, const std::string& baseFolder,
                                                const std::string& overridePath, SessionTimings* timings) {
  KILN_ASSIGN_OR_RETURN(const ctxbin::WeightRefs refs, binary.weightRefs());
  Stopwatch readClock;
  double convertMs = 0;
  std::vector<std::string> paths;
  std::vector<SourceContents> sources;
  const bool withFolds = std::any_of(refs.refs.begin(), refs.refs.end(), [](const auto& r) { return isFold(r.transform); });
  for (const auto& source : refs.sources) {
    KILN_ASSIGN_OR_RETURN(std::string path, locateSource(source, refs.sources.size(), baseFolder, overridePath));
    auto read = readSource(path, withFolds);
    if (!read.isOk()) return read.status().withContext("the source model of weightless context binary " + binary.origin());
    paths.push_back(std::move(path));
    convertMs += read->foldMs;  // re-derivation: weight_prepack_ms
    sources.push_back(std::move(read).value());
  }
  ctxbin::ExternalBlobs blobs;
  for (const auto& ref : refs.refs) {
    const std::string& path = paths[ref.source];
    const SourceContents& source = sources[ref.source];
    using T = ctxbin::WeightTransform;
    Tensor blob;
    if (isFold(ref.transform)) {
      auto fold = source.folds.find(ref.name);
      if (fold == source.folds.end()) {
        return Status(StatusCode::INVALID_GRAPH, "weightless context binary " + binary.origin() + " refers to the Conv "
                                                     "weights folded with BatchNormalization '" + ref.name + "', which "
                                                     "source model " + path + " does not hold: recompile");
      }
      const bool weight = ref.transform == T::BN_FOLD_WEIGHT || ref.transform == T::BN_FOLD_WEIGHT_FLOAT16;
      blob = weight ? fold->second.first : fold->second.second;
    } else {
      auto it = source.weights.find(ref.name);
      if (it == source.weights.end()) {
        return Status(StatusCode::INVALID_GRAPH, "weightless context binary " + binary.origin() + " refers to weight '" +
                                                     ref.name + "', which source model " + path +
                                                     " does not hold (not an initializer or Constant): recompile");
      }
      blob = it->second;
    }
    const bool sameBytes = blob.dtype() != DataType::STRING && blob.rawData() && blob.byteSize() == ref.sourceBytes;
    if (!sameBytes || ctxbin::contentHash(bytesOf(blob)) != ref.sourceHash) {
      return Status(StatusCode::INVALID_GRAPH, "source model " + path + " changed since weightless context binary " +
                                                   binary.origin() + " was compiled: weight '" + ref.name +
                                                   "' no longer has the recorded content hash " +
                                                   ctxbin::contentIdHex(ref.sourceHash) + ": recompile");
    }
    if (ref.transform == T::FLOAT16 || ref.transform == T::BN_FOLD_WEIGHT_FLOAT16 || ref.transform == T::BN_FOLD_BIAS_FLOAT16) {
      Stopwatch convertClock;
      if (blob.dtype() != DataType::FLOAT) {
        return Status(StatusCode::INVALID_GRAPH, "weight '" + ref.name + "' of " + path + " is not float32 (float16 storage)");
      }
      blob = toFloat16(blob);
      convertMs += convertClock.elapsedMs();
    }
    if (blob.byteSize() != ref.blobBytes || ctxbin::contentHash(bytesOf(blob)) != ref.blobHash) {
      return Status(StatusCode::INVALID_GRAPH, "weight '" + ref.name + "' of " + path + " does not give the bytes " +
                                                   binary.origin() + " was compiled with: recompile");
    }
    blobs[ref.blob] = std::move(blob);
  }
  if (timings) {
    timings->binary_read_ms += readClock.elapsedMs() - convertMs;
    timings->weight_prepack_ms += convertMs;
  }
  return blobs;
}

Result<std::vector<CompiledPartition>> decodePartitions(const ctxbin::ContextBinary& binary, bool resolve,
                                                        const std::string& baseFolder, const std::string& overridePath,
                                                        SessionTimings* timings) {
  if (!resolve || !binary.isWeightless()) return binary.partitions();
  KILN_ASSIGN_OR_RETURN(const ctxbin::ExternalBlobs blobs, resolveWeightRefs(binary, baseFolder, overridePath, timings));
  return binary.partitions(&blobs);
}

}  // namespace kiln::epctx
