// Long engine calls (session creation, compile) from Python: run without the GIL on a worker thread while the
// calling thread watches for Ctrl+C, and forward the engine's progress events to a Python callable.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>

#include "kiln/progress.h"

namespace kiln::python {

// The Python side of a ProgressSink: a callable (or None) and the first exception it raised. Shared with the
// engine's callback (by plain pointer: keep this object alive as long as what received the sink).
class PythonProgress {
 public:
  // `callback`: None, or called as callback(stage: str, done: int, total: int); returning False cancels.
  PythonProgress(pybind11::object callback, std::shared_ptr<CancellationToken> token);
  ~PythonProgress();
  // A sink for SessionOptions::progress that calls the callback (taking the GIL) and cancels on its
  // exception.
  ProgressSink sink();
  // Re-raises the callback's exception, if it raised one. Needs the GIL.
  void rethrow();

 private:
  void report(const ProgressEvent& event);
  pybind11::object callback_;
  std::shared_ptr<CancellationToken> token_;
  std::optional<pybind11::error_already_set> error_;
};

// Runs `work` on a worker thread with the GIL released; Ctrl+C (SIGINT) in the meantime cancels `token`,
// waits for `work` to return and raises KeyboardInterrupt. Call with the GIL held, from any thread (only the
// main thread sees signals). Returns what `work` returns.
template <class Work>
auto callInterruptibly(const std::shared_ptr<CancellationToken>& token, Work work) -> decltype(work()) {
  auto done = std::async(std::launch::async, std::move(work));
  std::optional<pybind11::error_already_set> interrupt;
  for (;;) {
    {
      pybind11::gil_scoped_release release;
      if (done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) break;
    }
    if (!interrupt && PyErr_CheckSignals() != 0) {
      interrupt.emplace();  // takes the KeyboardInterrupt out of the thread state until the work has stopped
      token->cancel();
    }
  }
  if (interrupt) throw *interrupt;
  return done.get();
}

}  // namespace kiln::python
