// Tensor storage for a CPU executor that is reused from run to run: a released buffer goes back to the pool and
// serves a later request (the smallest released buffer of at least the request and at most twice it; requests over
// 64 KiB round up to a size class first, four per doubling, so tensors that grow run by run find their buffers). After the
// first run of an input shape every allocation of the next runs of that shape is served from the pool, so the hot
// path makes no system allocations and takes no page faults: the memory plan of a shape is the set of buffers its
// first run left behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ep/cpu/thread_pool.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

class BufferPool {
 public:
  struct Stats {
    int64_t allocated = 0;  // buffers taken from the system
    size_t allocatedBytes = 0;  // their bytes, together
    int64_t reused = 0;     // requests served from released buffers
    size_t pooledBytes = 0;  // bytes waiting in the pool now
  };

  // `maxPooledBytes` bounds what the pool keeps; a buffer released beyond it goes back to the system.
  explicit BufferPool(size_t maxPooledBytes = size_t{1} << 30);

  // A tensor of `type` and `shape` whose contents are undefined (STRING tensors come from Tensor's constructor).
  // Its storage returns to the pool when the last tensor sharing it goes, on any thread, even after the pool.
  Tensor allocate(DataType type, const Shape& shape);
  // Maps every page of the buffers waiting in the pool now (written once, contents undefined), split over
  // `threads` (may be null), so the requests they serve take no page faults: for a memory plan made at session
  // creation (graph_executor_memory_plan.cpp). Requests made meanwhile wait.
  void mapPooledPages(ThreadPool* threads);

  Stats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace kiln::cpu
