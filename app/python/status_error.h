// Kiln Status -> Python exception: a failed engine call raises the kiln.KilnError subclass named after its
// code.
#pragma once

#include <stdexcept>

#include "kiln/status.h"

namespace kiln::python {

// Thrown by binding code for a non-OK Status; the translator registered by registerStatusErrors() turns it
// into the kiln._errors class for the code (kiln.InvalidArgument, kiln.NoSuchFile, ...).
class StatusError : public std::runtime_error {
 public:
  // Wraps a non-OK `status`.
  explicit StatusError(Status status) : std::runtime_error(status.message()), status_(std::move(status)) {}
  // The engine's status.
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Throws StatusError when `status` is not OK.
void throwIfError(const Status& status);

// The value of `result`, or throws StatusError with its status.
template <class T>
T valueOrThrow(Result<T> result) {
  throwIfError(result.status());
  return std::move(result).value();
}

// Registers the StatusError translator (the exception classes themselves live in kiln/_errors.py).
void registerStatusErrors();

}  // namespace kiln::python
