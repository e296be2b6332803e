#include "epcontext/weightless.h"

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "ep/vulkan/float16_storage.h"
#include "kiln/config_keys.h"
#include "onnx/model_loader.h"
#include "util/config_value.h"
#include "util/file_io.h"
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

bool weightlessRequested(const SessionOptions& options) {
  return configValue(options, config::kEnableWeightlessEpContextNodes) == "1" ||
         configValue(options, config::kEnableWeightless) == "1";
}

Result<std::map<std::string, Tensor>> sourceModelWeights(const std::string& path) {
  onnx_io::LoadOptions load;
  load.runShapeInference = false;
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, load));
  std::map<std::string, Tensor> weights;
  if (loaded.model.graph) collectWeights(*loaded.model.graph, weights);
  return weights;
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
    auto weights = sourceModelWeights(path);
    if (!weights.isOk()) return weights.status().withContext("reading the source model's weights (weightless)");
    std::error_code error;
    const fs::path absolute = fs::absolute(path, error);
    const fs::path relative = fs::absolute(absolute, error).lexically_normal().lexically_relative(
        fs::absolute(ctxFolder.empty() ? "." : ctxFolder, error).lexically_normal());
    result.sources.push_back({relative.empty() ? absolute.string() : relative.string(), absolute.lexically_normal().string()});
    for (const auto& [name, tensor] : *weights) {
      if (!usable(tensor)) continue;
      ctxbin::WeightRef ref;
      ref.source = static_cast<uint32_t>(s);
      ref.name = name;
      ref.sourceHash = ctxbin::contentHash(bytesOf(tensor));
      ref.sourceBytes = tensor.byteSize();
      index->emplace(ref.sourceHash, IndexEntry{ref, tensor});
      if (fp16 && tensor.dtype() == DataType::FLOAT) {
        Tensor half = vk::toFloat16(tensor);
        ref.transform = ctxbin::WeightTransform::FLOAT16;
        index->emplace(ctxbin::contentHash(bytesOf(half)), IndexEntry{ref, std::move(half)});
      }
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
  std::vector<std::map<std::string, Tensor>> weights;
  for (const auto& source : refs.sources) {
    KILN_ASSIGN_OR_RETURN(std::string path, locateSource(source, refs.sources.size(), baseFolder, overridePath));
    auto read = sourceModelWeights(path);
    if (!read.isOk()) return read.status().withContext("the source model of weightless context binary " + binary.origin());
    paths.push_back(std::move(path));
    weights.push_back(std::move(read).value());
  }
  ctxbin::ExternalBlobs blobs;
  for (const auto& ref : refs.refs) {
    const std::string& path = paths[ref.source];
    auto it = weights[ref.source].find(ref.name);
    if (it == weights[ref.source].end()) {
      return Status(StatusCode::INVALID_GRAPH, "weightless context binary " + binary.origin() + " refers to weight '" +
                                                   ref.name + "', which source model " + path +
                                                   " does not hold (not an initializer or Constant): recompile");
    }
    const Tensor& tensor = it->second;
    const bool sameBytes = tensor.dtype() != DataType::STRING && tensor.rawData() && tensor.byteSize() == ref.sourceBytes;
    if (!sameBytes || ctxbin::contentHash(bytesOf(tensor)) != ref.sourceHash) {
      return Status(StatusCode::INVALID_GRAPH, "source model " + path + " changed since weightless context binary " +
                                                   binary.origin() + " was compiled: weight '" + ref.name +
                                                   "' no longer has the recorded content hash " +
                                                   ctxbin::contentIdHex(ref.sourceHash) + ": recompile");
    }
    Tensor blob = tensor;
    if (ref.transform == ctxbin::WeightTransform::FLOAT16) {
      Stopwatch convertClock;
      if (tensor.dtype() != DataType::FLOAT) {
        return Status(StatusCode::INVALID_GRAPH, "weight '" + ref.name + "' of " + path + " is not float32 (float16 storage)");
      }
      blob = vk::toFloat16(tensor);
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
