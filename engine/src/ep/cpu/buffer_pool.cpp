#include "ep/cpu/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln::cpu {
namespace {

constexpr size_t kAlignment = 64;
// A released buffer serves requests down to half its size. Convolutional nets change tensor sizes by factors of 2 and
// 4 from stage to stage: a tighter fit (it was 1/1.25) left most of them unmatched, so the first run of a shape took
// ~100 MB fresh memory for PP-OCRv4 det at 640x640 instead of ~70 (page faults are most of a first run's extra time),
// and shapes that change between runs grew the pool to 185 MB instead of 87 (simulated on its inferred shapes).
constexpr size_t kSlackFactor = 2;

size_t roundUp(size_t bytes) { return (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment; }

// Requests above 64 KiB round up to a size class, four per doubling (at most 25% more memory): a tensor that grows
// a little every run, as a decoder's key/value cache does by one position per token, then lands on a class that the
// buffers released by the previous run already have. Without classes every step missed them all (each was a few
// hundred bytes too small), took fresh pages and left its old buffers in the pool: a 4-layer decoder grew from 52
// to 245 MB over 300 tokens and its steps slowed from 2.3 to 8.5 ms (tests/decoder/make_decoder.py, kiln bench
// --decode 300).
constexpr size_t kSizeClassesFrom = size_t{64} << 10;

size_t sizeClass(size_t bytes) {
  bytes = roundUp(bytes);
  if (bytes <= kSizeClassesFrom) return bytes;
  const int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const size_t step = size_t{1} << (log2 - 2);
  return (bytes + step - 1) / step * step;
}

// Maps every page of [data, data + bytes): the whole pages inside in one call where the kernel can
// (MADV_POPULATE_WRITE, Linux 5.14: no trap per page), then one write per page, which is all the mapping older
// kernels get and costs nothing once the pages are there. The contents stay undefined.
void touchPages(std::byte* data, size_t bytes) {
  static const size_t page = static_cast<size_t>(std::max<long>(sysconf(_SC_PAGESIZE), 4096));
#ifdef MADV_POPULATE_WRITE
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#endif
  volatile std::byte* bytesOut = data;
  for (size_t offset = 0; offset < bytes; offset += page) bytesOut[offset] = std::byte{0};
  bytesOut[bytes - 1] = std::byte{0};
}

}  // namespace

struct BufferPool::State {
  explicit State(size_t maxBytes) : maxPooledBytes(maxBytes) {}
  ~State() {
    for (auto& [size, buffer] : free) std::free(buffer);
  }

  // A buffer of at least `bytes`; `bytes` becomes its real size (a reused buffer may be a little larger).
  std::byte* take(size_t& bytes) {
    {
      std::lock_guard lock(mutex);
      auto it = free.lower_bound(bytes);
      if (it != free.end() && it->first <= bytes * kSlackFactor) {
        std::byte* buffer = it->second;
        bytes = it->first;
        pooledBytes -= it->first;
        free.erase(it);
        ++stats.reused;
        return buffer;
      }
      ++stats.allocated;
      stats.allocatedBytes += bytes;
    }
    return static_cast<std::byte*>(std::aligned_alloc(kAlignment, bytes));
  }

  void give(std::byte* buffer, size_t bytes) {
    {
      std::lock_guard lock(mutex);
      if (pooledBytes + bytes <= maxPooledBytes) {
        free.emplace(bytes, buffer);
        pooledBytes += bytes;
        return;
      }
    }
    std::free(buffer);
  }

  mutable std::mutex mutex;
  std::multimap<size_t, std::byte*> free;
  size_t pooledBytes = 0;
  const size_t maxPooledBytes;
  Stats stats;
};

BufferPool::BufferPool(size_t maxPooledBytes) : state_(std::make_shared<State>(maxPooledBytes)) {}

Tensor BufferPool::allocate(DataType type, const Shape& shape) {
  if (type == DataType::STRING) return Tensor(type, shape);
  size_t bytes = sizeClass(static_cast<size_t>(shapeSize(shape)) * dataTypeSize(type));
  std::byte* buffer = state_->take(bytes);
  if (!buffer) return Tensor(type, shape);  // let Tensor's own allocation report the failure
  // The deleter holds the state, so tensors that outlive the executor (session outputs) still return safely.
  std::shared_ptr<std::byte> storage(buffer, [state = state_, bytes](std::byte* p) { state->give(p, bytes); });
  return Tensor::wrap(type, shape, std::move(storage));
}

void BufferPool::mapPooledPages(ThreadPool* threads) {
  // Pieces of at most 2 MiB, so one big buffer spreads over the threads too.
  constexpr size_t kPiece = size_t{2} << 20;
  std::lock_guard lock(state_->mutex);
  std::vector<std::pair<std::byte*, size_t>> pieces;
  for (const auto& [bytes, buffer] : state_->free) {
    for (size_t offset = 0; offset < bytes; offset += kPiece) {
      pieces.emplace_back(buffer + offset, std::min(kPiece, bytes - offset));
    }
  }
  parallelFor(threads, static_cast<int64_t>(pieces.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) touchPages(pieces[static_cast<size_t>(i)].first, pieces[static_cast<size_t>(i)].second);
  });
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard lock(state_->mutex);
  Stats s = state_->stats;
  s.pooledBytes = state_->pooledBytes;
  return s;
}

}  // namespace kiln::cpu
