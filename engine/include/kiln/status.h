// Status and Result<T>: how every Kiln API call reports success or failure. No exceptions cross the API.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kiln {

// Numeric values follow ONNX Runtime's OrtErrorCode where it has one (architecture.md, Contracts).
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

// The code's name as spelled in the Contracts, e.g. "INVALID_GRAPH".
const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool isOk() const { return code_ == StatusCode::OK; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_GRAPH: <message>", or "OK".
  std::string toString() const;
  // Prepends context to the message ("while loading x.onnx: ...").
  Status withContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::OK;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(implicit)
  Result(Status status) : state_(std::move(status)) {}  // NOLINT(implicit); status must not be OK

  bool isOk() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
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
