// The CPU EP's intra-op threads (kiln.intra_op_num_threads): kernels split their work into ranges that the calling
// thread and the pool's workers run together. Workers spin briefly after each job, so the back-to-back small
// jobs of one inference do not pay a wake-up each, then sleep.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::cpu {

class ThreadPool {
 public:
  // `threads` counts the calling thread: a pool of 1 has no workers and runs everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n) and returns when all are done; `grain` is the
  // smallest amount of work worth a range of its own (n < 2 * grain runs as one call). Runs inline when the pool
  // has one thread or is already running a job (a nested call, or another session on this pool). An exception
  // thrown by fn is rethrown here once every range has finished.
  void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // The process-wide pool with `threads` threads, shared by every executor that asks for that count while
  // any of them holds it.
  static std::shared_ptr<ThreadPool> shared(int threads);
  // Thread counts of the shared pools alive now, ascending.
  static std::vector<int> liveSharedPools();

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunk = 1, chunks = 0;
  };
  void workerLoop();
  void runChunks(const Job& job);

  std::mutex busy_;  // held by the thread whose job is running
  std::mutex mutex_;  // guards job_, generation_ changes and active_ registration
  std::condition_variable wake_;
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0}, done_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> stop_{false};
  std::mutex errorMutex_;
  std::exception_ptr error_;  // the first exception a range threw in the current job
  std::vector<std::thread> workers_;
};

// Runs fn over [0, n) on `pool`, or inline when `pool` is null (kernels built outside a session: constant folding).
inline void parallelFor(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (pool) {
    pool->parallelFor(n, grain, fn);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace kiln::cpu
