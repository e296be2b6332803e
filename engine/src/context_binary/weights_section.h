// The weights section: every tensor the stored graphs read (initializers, prepacked constants, tensor
// attributes are inline instead), deduplicated by content so that identical weights across partitions, graphs
// and models are stored once (weight sharing). Dedup compares bytes on every hash match: a hash collision never
// merges different weights.
//
// Layout: blob count u32, then per blob offset u64 (from the section start, 64-aligned), size u64, xxHash3-64
// u64; then the blobs. A tensor reference (in the graphs section) is dtype i32, rank u32, dims i64..., blob u32
// (kShapeOnly: no values stored).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "context_binary/byte_io.h"
#include "context_binary/weight_refs_section.h"
#include "context_binary/weight_source.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ctxbin {

inline constexpr uint32_t kShapeOnly = 0xffffffffu;

struct WeightStats {
  uint64_t references = 0;      // tensor references written
  uint64_t blobs = 0;           // distinct contents stored
  uint64_t referencedBytes = 0; // bytes the references would take without deduplication
  uint64_t storedBytes = 0;     // bytes stored
  uint64_t externalBytes = 0;   // bytes a weightless binary refers to in its source models instead
};

// Where an initializer's bytes lie in an external-data file (the compile did not load them).
struct FileRange {
  std::string path;
  uint64_t offset = 0, size = 0;
};

// A weightless binary's lookup: the source weight whose bytes equal `bytes` (their contentHash is `hash`), or
// nullopt. WeightRef::blob is filled in by the writer.
using ExternalWeightFinder = std::function<std::optional<WeightRef>(std::span<const std::byte> bytes, uint64_t hash)>;
// Blobs a weightless binary does not store, by blob index: the tensor that supplies the bytes (from the source
// model), or an undefined tensor when unresolved (such references then read as type and shape only).
using ExternalBlobs = std::map<uint32_t, Tensor>;

// Blobs are kept as sources (tensors shared, file ranges unread) and hashed as they are added: the section's
// bytes exist only while it is streamed.
class WeightTableWriter {
 public:
  // Initializers (by name) whose tensors hold no data because their bytes stay in a file: references to them read
  // the file. `ranges` must outlive the writer.
  void setExternalWeights(const std::map<std::string, FileRange>* ranges) { external_ = ranges; }
  // The file range of initializer `name` when it has one and `tensor` holds no data; else nullptr.
  const FileRange* externalFor(const std::string& name, const Tensor& tensor) const;
  // Writes a reference to `tensor` into `out`, storing its bytes unless identical bytes are stored already. FAIL
  // or NO_SUCHFILE only for a file source that cannot be read.
  Status writeReference(const Tensor& tensor, ByteWriter& out);
  // The same for a tensor whose bytes are `range` (`tensor` gives type and shape). INVALID_ARGUMENT when the
  // range's size is not the tensor's.
  Status writeReference(const Tensor& tensor, const FileRange& range, ByteWriter& out);
  // Writes a reference with type and shape only (a constant a kernel folded away: nothing reads its values).
  void writeShapeOnly(const Tensor& tensor, ByteWriter& out);
  // The section's size in bytes, known before any blob is read again.
  uint64_t encodedSize() const;
  // The section's bytes, in order, in chunks (blob table first, then each blob read from its source).
  Status stream(const ChunkSink& sink) const;
  // A prepacked constant: writeReference, except in a weightless binary, where one the source does not hold as
  // is becomes type and shape only (the kernel derives it again at load).
  Status writeConstant(const Tensor& tensor, ByteWriter& out);
  // Weightless: in-memory bytes `find` locates in a source model are referenced (an empty blob plus a WeightRef),
  // not stored. (Weights read from an external-data file while streaming are always stored.)
  void setWeightless(ExternalWeightFinder find) { find_ = std::move(find); }
  bool weightless() const { return static_cast<bool>(find_); }
  const std::vector<WeightRef>& externalRefs() const { return refs_; }
  uint64_t derivedConstants() const { return derived_; }
  const WeightStats& stats() const { return stats_; }

 private:
  struct Blob {
    WeightSource source;
    uint64_t hash = 0;
    uint64_t offset = 0;  // from the section start
  };
  Result<uint32_t> addBlob(WeightSource source);
  std::vector<std::byte> encodeTable() const;
  std::vector<Blob> blobs_;
  std::vector<std::pair<uint64_t, uint32_t>> byHash_;  // sorted by hash
  WeightStats stats_;
  const std::map<std::string, FileRange>* external_ = nullptr;
  ExternalWeightFinder find_;
  std::vector<WeightRef> refs_;
  std::map<std::tuple<uint32_t, std::string, WeightTransform>, uint32_t> externalBlob_;
  uint64_t derived_ = 0;
};

class WeightTableReader {
 public:
  // Parses the blob table of `section`; `owner` keeps the section's memory alive for tensors that wrap it.
  // INVALID_GRAPH when any blob lies outside the section or its hash does not match.
  // `external` supplies the blobs a weightless binary does not store (nullptr: none).
  static Result<WeightTableReader> parse(std::span<const std::byte> section, std::shared_ptr<const void> owner,
                                         const ExternalBlobs* external = nullptr);
  // Reads a tensor reference; INVALID_GRAPH when the reference is malformed or its size does not match the blob.
  // A shape-only reference gives a tensor of that type and shape without storage (rawData() == nullptr).
  Result<Tensor> readReference(ByteReader& in) const;
  size_t blobCount() const { return blobs_.size(); }
  uint64_t blobBytes() const;

 private:
  std::span<const std::byte> section_;
  std::shared_ptr<const void> owner_;
  std::vector<std::span<const std::byte>> blobs_;
  ExternalBlobs external_;
};

// Shape encoding shared with inline tensors: dtype i32, rank u32, dims i64... INVALID_GRAPH on a negative
// dimension, a rank above 32 or an element count that overflows.
void writeTensorType(const Tensor& tensor, ByteWriter& out);
Result<std::pair<DataType, Shape>> readTensorType(ByteReader& in);
// Bytes a tensor's contents take in the format (strings: u32 count, then each as length + bytes).
std::vector<std::byte> tensorBytes(const Tensor& tensor);
// Builds a tensor of `type`/`shape` from `bytes` (copied; strings decoded). INVALID_GRAPH when sizes disagree.
Result<Tensor> tensorFromBytes(DataType type, const Shape& shape, std::span<const std::byte> bytes);

}  // namespace kiln::ctxbin
