#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

void runParallel(size_t count, const std::function<void(size_t)>& work, const std::function<void(size_t)>& progress) {
  if (count == 0) return;
  std::atomic<size_t> next{0};
  std::mutex doneMutex;
  std::condition_variable doneSignal;
  size_t finished = 0;
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      work(i);
      std::lock_guard lock(doneMutex);
      ++finished;
      doneSignal.notify_one();
    }
  };
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), count);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  // The calling thread waits and reports: progress callbacks run on the engine's (caller's) thread.
  size_t reported = 0;
  while (reported < count) {
    std::unique_lock lock(doneMutex);
    doneSignal.wait(lock, [&] { return finished > reported; });
    reported = finished;
    lock.unlock();
    if (progress) progress(reported);
  }
  for (auto& thread : pool) thread.join();
}

}  // namespace kiln
