// An exclusive lock on a file path shared by the processes of one user (flock): two compiles writing the same
// outputs take turns, so the second can see and reuse what the first wrote. The lock file lives in the user's
// runtime folder ($XDG_RUNTIME_DIR/kiln-locks when that exists, else <temp>/kiln-locks-<uid>), named by a hash of the locked path, so
// nothing is ever left beside the user's files, even by a killed process (the kernel drops its lock).
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

class PathLock {
 public:
  // Waits until no other holder of `path`'s lock remains, then holds it. FAIL when the runtime folder cannot hold
  // the lock file.
  static Result<PathLock> acquire(const std::string& path);

  PathLock(PathLock&& other) noexcept;
  PathLock& operator=(PathLock&& other) noexcept;
  PathLock(const PathLock&) = delete;
  PathLock& operator=(const PathLock&) = delete;
  ~PathLock();

 private:
  explicit PathLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kiln
