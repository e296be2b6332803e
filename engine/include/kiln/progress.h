// Progress reporting and cooperative cancellation for long engine work (session creation, compile, conformance).
#pragma once

#include "kiln/export.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace kiln {

// The steps the engine reports, in the order a session creation or compile runs them. A tool that draws progress
// switches on these, never on the display text.
enum class ProgressStep {
  OTHER,      // a step with no kind of its own ("bisect", "model 2/3" of a shared compile): `stage` says what
  LOAD,       // reading the model (0/1), or loading stored partitions (i/n)
  OPTIMIZE,   // graph optimization (0/1)
  PARTITION,  // placing nodes on EPs (0/1, then 1/1)
  COMPILE,    // compiling partitions: done = partitions finished, total = all of them
  GLSLANG,    // one partition's shaders to SPIR-V (`partition` names it): done/total shaders
  PIPELINES,  // one partition's pipelines created: done/total pipelines
  AUTOTUNE,   // one partition's kernels with candidates timed: done/total kernels (a cancel is honoured between them)
  WRITE,      // writing a compile's files (0/1, then 1/1)
};

// "load", "optimize", "partition", "compile", "glslang", "pipelines", "autotune", "write"; "" for OTHER.
constexpr const char* progressStepName(ProgressStep step) {
  switch (step) {
    case ProgressStep::LOAD: return "load";
    case ProgressStep::OPTIMIZE: return "optimize";
    case ProgressStep::PARTITION: return "partition";
    case ProgressStep::COMPILE: return "compile";
    case ProgressStep::GLSLANG: return "glslang";
    case ProgressStep::PIPELINES: return "pipelines";
    case ProgressStep::AUTOTUNE: return "autotune";
    case ProgressStep::WRITE: return "write";
    case ProgressStep::OTHER: break;
  }
  return "";
}

// One progress event: `stage` is the display text ("load", "partition", "kiln_partition_0: glslang", "bisect");
// `step` its kind and `partition` the partition a per-partition step is about ("" otherwise); `done`/`total` count
// units of that stage (total 0 = unknown).
struct KILN_EXPORT ProgressEvent {
  ProgressEvent() = default;
  ProgressEvent(std::string stage, int64_t done, int64_t total, ProgressStep step = ProgressStep::OTHER,
                std::string partition = {})
      : stage(std::move(stage)), done(done), total(total), step(step), partition(std::move(partition)) {}

  std::string stage;
  int64_t done = 0;
  int64_t total = 0;
  ProgressStep step = ProgressStep::OTHER;
  std::string partition;
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

  // Calls onProgress, if set, with one event of `step` (about `partition`, for the per-partition steps); its
  // display text is the step's name, prefixed "<partition>: " when there is one.
  void report(ProgressStep step, int64_t done, int64_t total, const std::string& partition = {}) const {
    if (!onProgress) return;
    const std::string name = progressStepName(step);
    onProgress(ProgressEvent{partition.empty() ? name : partition + ": " + name, done, total, step, partition});
  }
  // Calls onProgress, if set, with one event of a step with no kind of its own (ProgressStep::OTHER).
  void report(std::string stage, int64_t done, int64_t total) const {
    if (onProgress) onProgress(ProgressEvent{std::move(stage), done, total, ProgressStep::OTHER, {}});
  }
  // True when a token is set and cancelled.
  bool cancelled() const { return cancellation && cancellation->isCancelled(); }
};

}  // namespace kiln
