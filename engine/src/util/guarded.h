// No exception crosses the engine's API: public entry points run their body through guarded(), which turns
// anything thrown below (allocation failure, a library's throw) into a Status.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "kiln/status.h"

namespace kiln {

template <class F>
auto guarded(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::RUNTIME_EXCEPTION, "out of memory");
  } catch (const std::exception& e) {
    return Status(StatusCode::RUNTIME_EXCEPTION, std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace kiln
