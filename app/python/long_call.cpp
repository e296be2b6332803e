#include "long_call.h"

namespace py = pybind11;

namespace kiln::python {

PythonProgress::PythonProgress(py::object callback, std::shared_ptr<CancellationToken> token)
    : callback_(std::move(callback)), token_(std::move(token)) {}

PythonProgress::~PythonProgress() {
  py::gil_scoped_acquire gil;
  callback_ = py::object();
  error_.reset();
}

ProgressSink PythonProgress::sink() {
  ProgressSink sink;
  sink.cancellation = token_;
  if (callback_.is_none()) return sink;
  // The engine may copy the sink on threads without the GIL: it holds a plain pointer, never a Python object.
  // The owner keeps this object alive as long as the engine object that received the sink.
  PythonProgress* self = this;
  sink.onProgress = [self](const ProgressEvent& event) { self->report(event); };
  return sink;
}

void PythonProgress::report(const ProgressEvent& event) {
  py::gil_scoped_acquire gil;
  if (error_) return;
  try {
    py::object answer = callback_(event.stage, event.done, event.total);
    if (py::isinstance<py::bool_>(answer) && !answer.cast<bool>()) token_->cancel();
  } catch (py::error_already_set& error) {
    error_.emplace(std::move(error));
    token_->cancel();
  }
}

void PythonProgress::rethrow() {
  if (error_) {
    py::error_already_set error = std::move(*error_);
    error_.reset();
    throw error;
  }
}

}  // namespace kiln::python
