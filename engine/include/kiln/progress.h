// Progress reporting and cooperative cancellation for long engine work (session creation, compile, conformance).
#pragma once

#include "kiln/export.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace kiln {

// One progress event: `stage` names the step ("load", "partition", "compile partition 2/5", ...);
// `done`/`total` count units of that stage (total 0 = unknown).
struct KILN_EXPORT ProgressEvent {
  std::string stage;
  int64_t done = 0;
  int64_t total = 0;
};

// Shared by the caller and the engine: the caller may cancel from any thread; the engine checks between steps
// and returns CANCELLED.
class KILN_EXPORT CancellationToken {
 public:
  // Marks the work as cancelled (any thread); the engine notices at its next check.
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  // Clears the mark, so the token can serve another piece of work.
  void reset() { cancelled_.store(false, std::memory_order_relaxed); }
  // True after cancel() (until reset()).
  bool isCancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// What SessionOptions carries: an optional callback (called on the engine's thread) and an optional token.
struct KILN_EXPORT ProgressSink {
  std::function<void(const ProgressEvent&)> onProgress;
  std::shared_ptr<CancellationToken> cancellation;

  // Calls onProgress, if set, with one event.
  void report(std::string stage, int64_t done, int64_t total) const {
    if (onProgress) onProgress(ProgressEvent{std::move(stage), done, total});
  }
  // True when a token is set and cancelled.
  bool cancelled() const { return cancellation && cancellation->isCancelled(); }
};

}  // namespace kiln
