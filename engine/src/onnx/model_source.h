// Where a model comes from, before it is read.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace kiln {

// A model file (`path`), or serialized bytes in memory (`path` empty; the caller keeps them alive).
struct ModelSource {
  std::string path;
  std::span<const std::byte> bytes;
};

}  // namespace kiln
