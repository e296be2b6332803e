// Status and Result<T>: how every Kiln API call reports success or failure. No exceptions cross the API.
#pragma once

#include "kiln/export.h"

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kiln {

// Numeric values follow ONNX Runtime's OrtErrorCode where it has one.
enum class StatusCode : int {
  OK = 0,
  FAIL = 1,
  INVALID_ARGUMENT = 2,
  NO_SUCHFILE = 3,
  NO_MODEL = 4,
  ENGINE_ERROR = 5,
  RUNTIME_EXCEPTION = 6,
  INVALID_PROTOBUF = 7,
  MODEL_LOADED = 8,
  NOT_IMPLEMENTED = 9,
  INVALID_GRAPH = 10,
  EP_FAIL = 11,
  CANCELLED = 12,
  MODEL_REQUIRES_COMPILATION = 13,
};

// The code's name as spelled in the enum, e.g. "INVALID_GRAPH" ("UNKNOWN" for a value outside it).
KILN_EXPORT const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // OK.
  Status() = default;
  // A Status with `code` and a message a user can act on.
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  // The OK Status.
  static Status ok() { return {}; }
  // True for OK.
  bool isOk() const { return code_ == StatusCode::OK; }
  // The code (OK on success).
  StatusCode code() const { return code_; }
  // The message ("" for OK).
  const std::string& message() const { return message_; }
  // "INVALID_GRAPH: <message>", or "OK".
  KILN_EXPORT std::string toString() const;
  // Prepends context to the message ("while loading x.onnx: ..."); OK stays OK.
  KILN_EXPORT Status withContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::OK;
  std::string message_;
};

namespace detail {
// Reports value() called on an error Result (with its Status) on stderr and aborts the process.
[[noreturn]] KILN_EXPORT void abortOnErrorResultValue(const Status& status);
// The Status a Result built from an OK Status holds instead: FAIL, naming the misuse.
KILN_EXPORT Status okStatusWithoutValue();
}  // namespace detail

// A value or the Status that explains why there is none. Never throws.
//
// Misuse has defined behaviour: a Result built from an OK Status (which would hold neither) holds FAIL instead,
// and value() (or ->, *) on an error Result reports the Status on stderr and calls std::abort(), in every build
// type. Aborting was chosen over throwing (no exception crosses the API) and over a default-constructed fallback
// (a silent empty tensor or null session would fail later, far from the bug, and not every T has a default): for
// a library embedding Kiln, a caller that skips isOk() has a bug, and it must show where it is. Check isOk() first.
template <class T>
class [[nodiscard]] Result {
 public:
  // A Result holding `value`.
  Result(T value) : state_(std::move(value)) {}  // NOLINT(implicit)
  // A Result holding the error `status`; an OK status becomes FAIL ("Result built from an OK status ...").
  Result(Status status)  // NOLINT(implicit)
      : state_(status.isOk() ? detail::okStatusWithoutValue() : std::move(status)) {}

  // True when the Result holds a value.
  bool isOk() const { return std::holds_alternative<T>(state_); }
  // The error, or an OK Status when the Result holds a value.
  const Status& status() const {
    static const Status kOk;
    const Status* error = std::get_if<Status>(&state_);
    return error ? *error : kOk;
  }
  // The value. Precondition: isOk(); otherwise aborts (see above).
  T& value() & { return checkedValue(); }
  // The value. Precondition: isOk(); otherwise aborts.
  const T& value() const& { return const_cast<Result*>(this)->checkedValue(); }
  // The value, moved out. Precondition: isOk(); otherwise aborts.
  T&& value() && { return std::move(checkedValue()); }
  // Member access on the value. Precondition: isOk(); otherwise aborts.
  T* operator->() { return &checkedValue(); }
  // Member access on the value. Precondition: isOk(); otherwise aborts.
  const T* operator->() const { return &value(); }
  // The value. Precondition: isOk(); otherwise aborts.
  T& operator*() & { return checkedValue(); }

 private:
  T& checkedValue() {
    T* held = std::get_if<T>(&state_);
    if (!held) {
      const Status* error = std::get_if<Status>(&state_);
      detail::abortOnErrorResultValue(error ? *error : detail::okStatusWithoutValue());
    }
    return *held;
  }

  std::variant<T, Status> state_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define KILN_RETURN_IF_ERROR(expr)                   \
  do {                                               \
    ::kiln::Status kiln_status_ = (expr);            \
    if (!kiln_status_.isOk()) return kiln_status_;   \
  } while (0)

// `lhs = value of expr`, or return its Status. Usage: KILN_ASSIGN_OR_RETURN(auto model, loadModel(path));
#define KILN_ASSIGN_OR_RETURN(lhs, expr) KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.isOk()) return tmp.status();            \
  lhs = std::move(tmp).value()
