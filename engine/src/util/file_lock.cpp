#include "util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

namespace kiln {
namespace {

namespace fs = std::filesystem;

// $XDG_RUNTIME_DIR/kiln-locks when that folder exists (it may be set but not created yet, as in a fresh build
// tree's test environment), else <temp>/kiln-locks-<uid>.
fs::path lockFolder() {
  std::error_code error;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && *runtime && fs::is_directory(runtime, error)) return fs::path(runtime) / "kiln-locks";
  return fs::temp_directory_path(error) / ("kiln-locks-" + std::to_string(::getuid()));
}

}  // namespace

Result<PathLock> PathLock::acquire(const std::string& path) {
  std::error_code error;
  const std::string key = fs::weakly_canonical(fs::absolute(path, error), error).string();
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.lock", static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  const fs::path folder = lockFolder();
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status(StatusCode::FAIL, "cannot create the lock folder '" + folder.string() + "': " + std::strerror(errno));
  }
  const std::string lockPath = (folder / name).string();
  const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status(StatusCode::FAIL, "cannot create the lock file '" + lockPath + "': " + std::strerror(errno));
  int locked;
  do {
    locked = ::flock(fd, LOCK_EX);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0) {
    const int failure = errno;
    ::close(fd);
    return Status(StatusCode::FAIL, "cannot lock '" + lockPath + "': " + std::strerror(failure));
  }
  return PathLock(fd);
}

PathLock::PathLock(PathLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

PathLock& PathLock::operator=(PathLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

PathLock::~PathLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace kiln
