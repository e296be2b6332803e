#include "kiln/status.h"

#include <cstdio>
#include <cstdlib>

namespace kiln {

const char* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::OK: return "OK";
    case StatusCode::FAIL: return "FAIL";
    case StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case StatusCode::NO_SUCHFILE: return "NO_SUCHFILE";
    case StatusCode::NO_MODEL: return "NO_MODEL";
    case StatusCode::ENGINE_ERROR: return "ENGINE_ERROR";
    case StatusCode::RUNTIME_EXCEPTION: return "RUNTIME_EXCEPTION";
    case StatusCode::INVALID_PROTOBUF: return "INVALID_PROTOBUF";
    case StatusCode::MODEL_LOADED: return "MODEL_LOADED";
    case StatusCode::NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case StatusCode::INVALID_GRAPH: return "INVALID_GRAPH";
    case StatusCode::EP_FAIL: return "EP_FAIL";
    case StatusCode::CANCELLED: return "CANCELLED";
    case StatusCode::MODEL_REQUIRES_COMPILATION: return "MODEL_REQUIRES_COMPILATION";
  }
  return "UNKNOWN";
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

Status Status::withContext(std::string_view context) const {
  if (isOk()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

namespace detail {

void abortOnErrorResultValue(const Status& status) {
  std::fprintf(stderr, "kiln: Result::value() called on an error Result (check isOk() first): %s\n",
               status.toString().c_str());
  std::fflush(stderr);
  std::abort();
}

Status okStatusWithoutValue() {
  return Status(StatusCode::FAIL, "a Result was built from an OK status, so it holds no value");
}

}  // namespace detail

}  // namespace kiln
