#include "ep/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <map>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KILN_CPU_RELAX() _mm_pause()
#else
#define KILN_CPU_RELAX() std::this_thread::yield()
#endif

namespace kiln::cpu {
namespace {

// How long an idle worker polls for the next job before sleeping: longer than the gap between two kernels of
// one inference, short enough that an idle session gives its cores back at once.
constexpr auto kSpinTime = std::chrono::microseconds(300);
// Ranges per thread: a few more than one, so a thread slowed by something else does not hold up the job.
constexpr int64_t kChunksPerThread = 4;

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

namespace {
// Set while this thread runs ranges of a job: a parallelFor from inside one runs inline.
thread_local bool tInsideJob = false;
}  // namespace

void ThreadPool::runChunks(const Job& job) {
  const bool wasInside = tInsideJob;
  tInsideJob = true;
  for (int64_t c = next_.fetch_add(1); c < job.chunks; c = next_.fetch_add(1)) {
    const int64_t begin = c * job.chunk;
    try {
      (*job.fn)(begin, std::min(job.n, begin + job.chunk));
    } catch (...) {
      // Counted as done like any range, so the owner never waits forever; the owner rethrows it.
      std::lock_guard lock(errorMutex_);
      if (!error_) error_ = std::current_exception();
    }
    done_.fetch_add(1, std::memory_order_release);
  }
  tInsideJob = wasInside;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  while (true) {
    const auto spinUntil = std::chrono::steady_clock::now() + kSpinTime;
    for (int i = 0; generation_.load(std::memory_order_acquire) == seen && !stop_; ++i) {
      KILN_CPU_RELAX();
      if ((i & 255) == 255 && std::chrono::steady_clock::now() > spinUntil) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen || stop_; });
      }
    }
    Job job;
    {
      // Registering under the mutex means the owner cannot set up the next job while this one is being read.
      std::lock_guard lock(mutex_);
      if (stop_) return;
      seen = generation_.load();
      job = job_;
      ++active_;
    }
    runChunks(job);
    active_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t maxChunks = std::min<int64_t>((n + grain - 1) / grain, threads() * kChunksPerThread);
  if (workers_.empty() || maxChunks < 2 || tInsideJob) {
    fn(0, n);
    return;
  }
  std::unique_lock busy(busy_, std::try_to_lock);
  if (!busy.owns_lock()) {
    fn(0, n);
    return;
  }
  Job job{&fn, n, (n + maxChunks - 1) / maxChunks, 0};
  job.chunks = (n + job.chunk - 1) / job.chunk;
  while (true) {
    // A worker still leaving the previous job must be gone before its fields change.
    std::unique_lock lock(mutex_);
    if (active_.load() == 0) {
      job_ = job;
      next_ = 0;
      done_ = 0;
      generation_.fetch_add(1, std::memory_order_release);
      break;
    }
    lock.unlock();
    KILN_CPU_RELAX();
  }
  wake_.notify_all();
  runChunks(job);
  // A worker that took a range and was preempted holds us up: stop spinning after a while and yield the core.
  for (int i = 0; done_.load(std::memory_order_acquire) < job.chunks; ++i) {
    if (i < 4096) {
      KILN_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  std::exception_ptr error;
  {
    std::lock_guard lock(errorMutex_);
    std::swap(error, error_);
  }
  if (error) std::rethrow_exception(error);
}

namespace {

struct SharedPools {
  std::mutex mutex;
  std::map<int, std::weak_ptr<ThreadPool>> byThreads;
};
SharedPools& sharedPools() {
  static SharedPools pools;
  return pools;
}

}  // namespace

std::vector<int> ThreadPool::liveSharedPools() {
  SharedPools& pools = sharedPools();
  std::lock_guard lock(pools.mutex);
  std::vector<int> counts;
  for (const auto& [threads, pool] : pools.byThreads) {
    if (!pool.expired()) counts.push_back(threads);
  }
  return counts;
}

std::shared_ptr<ThreadPool> ThreadPool::shared(int threads) {
  SharedPools& pools = sharedPools();
  std::lock_guard lock(pools.mutex);
  std::weak_ptr<ThreadPool>& slot = pools.byThreads[threads];
  std::shared_ptr<ThreadPool> pool = slot.lock();
  if (!pool) {
    pool = std::make_shared<ThreadPool>(threads);
    slot = pool;
  }
  return pool;
}

}  // namespace kiln::cpu
