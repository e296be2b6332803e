#include "run_concurrency.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace kiln::cli {

Result<ConcurrentRuns> runConcurrently(Session& first, const std::string& model, const SessionOptions& options,
                                       const std::vector<NamedValue>& inputs, int concurrency, int runsEach,
                                       double durationSeconds) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::unique_ptr<Session>> more;
  for (int i = 1; i < concurrency; ++i) {
    auto session = Session::create(model, options);
    if (!session.isOk()) return session.status().withContext("creating session " + std::to_string(i + 1) + " of " + std::to_string(concurrency));
    more.push_back(std::move(session).value());
  }
  std::vector<Session*> workers = {&first};
  for (auto& session : more) workers.push_back(session.get());

  std::vector<std::vector<double>> latencies(workers.size());
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  Status error = Status::ok();
  const Clock::time_point start = Clock::now();
  auto elapsed = [](Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers.size(); ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; !failed.load(); ++r) {
        if (durationSeconds > 0 ? r > 0 && elapsed(start) >= durationSeconds : r >= runsEach) break;
        const Clock::time_point runStart = Clock::now();
        auto outputs = workers[w]->runValues(inputs, RunOptions{});
        if (!outputs.isOk()) {
          std::lock_guard lock(errorMutex);
          if (!failed.exchange(true)) error = outputs.status().withContext("worker " + std::to_string(w + 1));
          return;
        }
        latencies[w].push_back(elapsed(runStart) * 1000.0);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (failed) return error;
  ConcurrentRuns result;
  result.sessions = static_cast<int>(workers.size());
  result.wallSeconds = elapsed(start);
  for (const auto& worker : latencies) result.latencyMs.insert(result.latencyMs.end(), worker.begin(), worker.end());
  return result;
}

}  // namespace kiln::cli
