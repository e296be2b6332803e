// Read-only views of whole files through mmap, so a context binary's weights are used in place instead of copied.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "kiln/status.h"

namespace kiln {

// A private (copy-on-write) mapping of a whole file, unmapped when the last reference drops. Writes through the
// mapping never reach the file, so tensors that wrap it stay ordinary mutable tensors.
class MappedFile {
 public:
  // Maps `path`. NO_SUCHFILE when it cannot be opened or is a directory; an empty file maps to an empty view.
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::byte* mutableData() { return data_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln
