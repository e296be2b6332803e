// Where a weight's bytes come from while a context binary is written: a tensor in memory, or a range of a file
// (an external-data initializer the compile never loaded) read in bounded chunks. The writer reads every source
// twice (hashes first, bytes later), so a binary of any size streams with one chunk resident per source.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ctxbin {

// The most bytes one read of a file source holds (and the largest chunk the binary is streamed in).
inline constexpr size_t kStreamChunkBytes = 4u << 20;

// Receives consecutive pieces of a byte stream; a non-OK status stops the stream with it.
using ChunkSink = std::function<Status(std::span<const std::byte> chunk)>;

class WeightSource {
 public:
  // The bytes of `tensor` as the format stores them (strings encoded); the tensor's storage is shared, not copied.
  static WeightSource inMemory(const Tensor& tensor);
  // `size` bytes at `offset` of the file `path`, read when streamed (never mapped or loaded whole).
  static WeightSource fileRange(std::string path, uint64_t offset, uint64_t size);

  uint64_t size() const { return size_; }
  // The bytes of an in-memory source (a view of its storage); nullopt for a file range.
  std::optional<std::span<const std::byte>> memoryBytes() const;
  // Passes the bytes to `sink` in order, in chunks of at most kStreamChunkBytes. NO_SUCHFILE, INVALID_ARGUMENT (not
  // a regular file) or FAIL (naming the file) when a file source cannot be read whole.
  Status forEachChunk(const ChunkSink& sink) const;
  // Copies `out.size()` bytes from `offset` of the weight into `out` (offset + size within size()); errors as
  // forEachChunk.
  Status read(uint64_t offset, std::span<std::byte> out) const;
  // xxHash3-64 of the bytes (contentHash of them, computed chunk by chunk).
  Result<uint64_t> hash() const;

 private:
  Tensor tensor_;                  // in memory: the tensor (storage shared)
  std::vector<std::byte> encoded_; // in memory, strings: their encoding
  std::string path_;               // file range
  uint64_t offset_ = 0, size_ = 0;
};

// True when `a` and `b` hold the same bytes (compared chunk by chunk).
Result<bool> sameBytes(const WeightSource& a, const WeightSource& b);

}  // namespace kiln::ctxbin
