// The weight-references section of a weightless context binary (ep.enable_weightless_ep_context_nodes=1, format
// 1.1): which weights-section blobs are not stored but come from a source model's initializers or Constant node
// values, by name and content hash, and how many prepacked constants are re-derived at load. Those blobs are
// stored empty, so a reader that skips this section fails on them ("needs N bytes, has 0") instead of misreading.
//
// Layout: source count u32, per source its path relative to the ctx model's folder (string) and its absolute path
// at compile time (string); reference count u32, per reference blob u32, source u32, name (string), transform u8,
// source tensor hash u64 and bytes u64, blob hash u64 and bytes u64 (after the transform); derived constants u64.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::ctxbin {

// What turns source tensors into the blob: nothing, float32 → float16 (kiln.vulkan.fp16=1 storage), or a
// BatchNormalization folded into the Conv before it (the reference then names the BatchNormalization's output: the
// folded weights or bias, float16 when the Conv's weights are, or the _FLOAT16 kinds under kiln.vulkan.fp16=1).
enum class WeightTransform : uint8_t {
  NONE = 0, FLOAT16 = 1, BN_FOLD_WEIGHT = 2, BN_FOLD_BIAS = 3, BN_FOLD_WEIGHT_FLOAT16 = 4, BN_FOLD_BIAS_FLOAT16 = 5
};
const char* weightTransformName(WeightTransform transform);

struct WeightSourceModel {
  std::string relativePath;  // from the ctx model's folder (may climb with ..)
  std::string absolutePath;  // where it was at compile time
};

struct WeightRef {
  uint32_t blob = 0;      // index in the weights section
  uint32_t source = 0;    // index in WeightRefs::sources
  std::string name;       // initializer or Constant output name in the source model
  WeightTransform transform = WeightTransform::NONE;
  uint64_t sourceHash = 0, sourceBytes = 0;  // contentHash of the source tensor's bytes
  uint64_t blobHash = 0, blobBytes = 0;      // of the bytes the graphs read (after the transform)
};

struct WeightRefs {
  std::vector<WeightSourceModel> sources;
  std::vector<WeightRef> refs;
  uint64_t derivedConstants = 0;  // prepacked constants stored as type and shape only: re-derived at load
};

std::vector<std::byte> encodeWeightRefs(const WeightRefs& refs);
// INVALID_GRAPH when the section does not parse or a reference names a source that does not exist.
Result<WeightRefs> decodeWeightRefs(std::span<const std::byte> section);

}  // namespace kiln::ctxbin
