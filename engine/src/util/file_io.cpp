#include "util/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace kiln {

namespace {

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a plain file";
}

Status notRegular(const std::string& path, mode_t mode) {
  return Status(StatusCode::INVALID_ARGUMENT, "'" + path + "' is not a regular file (" + fileTypeName(mode) + ")");
}

}  // namespace

Status checkRegularFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status(StatusCode::NO_SUCHFILE, "file not found: " + path);
    return Status(StatusCode::NO_SUCHFILE, "cannot open " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) return notRegular(path, info.st_mode);
  return Status::ok();
}

Result<std::vector<std::byte>> readFileBytes(const std::string& path) {
  KILN_RETURN_IF_ERROR(checkRegularFile(path));
  // O_NONBLOCK: should the path turn into a FIFO between the check and the open, the open still returns at once
  // (and fstat below refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::NO_SUCHFILE, "cannot open " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return notRegular(path, info.st_mode);
  }
  std::vector<std::byte> bytes(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) return Status(StatusCode::FAIL, "cannot read " + path);
  return bytes;
}

namespace {

namespace fs = std::filesystem;

// ".<name>.tmp.<pid>.<counter>.<random>" beside `target`: unique per process (pid), per call within it (a counter:
// threads saving the same path at once) and across pid reuse (random); O_EXCL / linkat still refuse a name that
// exists. Concurrent savers of one path therefore never share a temp file, and the last rename wins.
fs::path uniqueTempPath(const fs::path& target) {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  // Built by appending: GCC 12 at -O3 raises a false -Wrestrict on `"." + std::string` (GCC PR105329).
  std::string tempName(".");
  tempName += target.filename().string();
  tempName += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." + std::to_string(random());
  return (target.has_parent_path() ? target.parent_path() : fs::path(".")) / tempName;
}

// An open temp file for `target`: anonymous (O_TMPFILE, `path` empty) where the folder's filesystem supports it, so
// that a process killed while writing (SIGKILL, no cleanup) leaves nothing behind; else a named file beside it.
struct TempFile {
  int fd = -1;
  std::string path;
};

Result<TempFile> createTemp(const fs::path& target) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
#ifdef O_TMPFILE
  // Publishing an anonymous file needs linkat() through /proc/self/fd (AT_EMPTY_PATH needs a capability).
  if (::access("/proc/self/fd", X_OK) == 0) {
    const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) return TempFile{fd, ""};
  }
#endif
  const fs::path temp = uniqueTempPath(target);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::FAIL, "cannot create " + temp.string() + ": " + std::strerror(errno));
  return TempFile{fd, temp.string()};
}

// Removes the temp files of `target` left by writers that no longer run. A writer SIGKILLed in the microseconds
// between linking its anonymous file to a name and renaming it over the target (or, without O_TMPFILE, at any point
// of its write) leaves ".<name>.tmp.<pid>.*" behind; POSIX has no call that publishes an anonymous file over an
// existing one, so the next write to the same target sweeps them. A temp whose pid still runs (this process, a
// concurrent writer, or a reused pid) is kept: at worst a stale file waits for a later write.
void removeTempsOfDeadWriters(const fs::path& target) {
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot) continue;
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code removeError;
    fs::remove(it->path(), removeError);
  }
}

void discard(const TempFile& temp) {
  if (temp.fd >= 0) ::close(temp.fd);
  std::error_code ec;
  if (!temp.path.empty()) fs::remove(temp.path, ec);
}

// Writes a fresh, fsynced temp file for `target` and returns it still open. Nothing is left behind on failure.
Result<TempFile> writeTempFor(const fs::path& target, const std::function<Status(const ChunkWriter&)>& produce) {
  KILN_ASSIGN_OR_RETURN(TempFile temp, createTemp(target));
  const std::string shownName = temp.path.empty() ? target.string() + " (temporary)" : temp.path;
  auto writeChunk = [&temp, &shownName](std::span<const std::byte> chunk) -> Status {
    const std::byte* data = chunk.data();
    size_t left = chunk.size();
    while (left > 0) {
      const ssize_t n = ::write(temp.fd, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status(StatusCode::FAIL, "cannot write " + shownName + ": " + std::strerror(errno));
      data += n;
      left -= static_cast<size_t>(n);
    }
    return Status::ok();
  };
  Status status = produce(writeChunk);
  if (status.isOk() && ::fsync(temp.fd) != 0) {
    status = Status(StatusCode::FAIL, "fsync failed for " + shownName + ": " + std::strerror(errno));
  }
  if (!status.isOk()) {
    discard(temp);
    return status;
  }
  return temp;
}

// Renames the temp file over `target` (an anonymous one first gets a unique name beside it: the only moment a
// kill could leave it behind is between that link and the rename).
Status publish(const TempFile& temp, const std::string& target) {
  std::string named = temp.path;
  if (named.empty()) {
    named = uniqueTempPath(target).string();
    const std::string source = "/proc/self/fd/" + std::to_string(temp.fd);
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, named.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return Status(StatusCode::FAIL, "cannot link the temporary file for " + target + ": " + std::strerror(errno));
    }
  }
  std::error_code ec;
  fs::rename(named, target, ec);
  if (!ec) return Status::ok();
  fs::remove(named, ec);
  return Status(StatusCode::FAIL, "cannot rename " + named + " to " + target + ": " + ec.message());
}

}  // namespace

Status writeFileAtomically(const std::string& path, const std::function<Status(const ChunkWriter&)>& produce) {
  FileTransaction transaction;
  KILN_RETURN_IF_ERROR(transaction.stage(path, produce));
  return transaction.commit();
}

FileTransaction::~FileTransaction() {
  for (const auto& file : staged_) discard(TempFile{file.fd, file.temp});
  std::error_code ec;
  // Deepest first; a folder that holds anything else stays (remove() refuses a non-empty folder).
  for (auto it = createdFolders_.rbegin(); it != createdFolders_.rend(); ++it) std::filesystem::remove(*it, ec);
}

Status FileTransaction::stage(const std::string& path, const std::function<Status(const ChunkWriter&)>& produce) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    std::vector<std::string> missing;  // shallowest first
    for (auto folder = parent; !folder.empty() && !std::filesystem::exists(folder, ec); folder = folder.parent_path()) {
      missing.insert(missing.begin(), folder.string());
    }
    std::filesystem::create_directories(parent, ec);
    if (ec) return Status(StatusCode::FAIL, "cannot create folder " + parent.string() + ": " + ec.message());
    createdFolders_.insert(createdFolders_.end(), missing.begin(), missing.end());
  }
  removeTempsOfDeadWriters(path);
  KILN_ASSIGN_OR_RETURN(TempFile temp, writeTempFor(path, produce));
  staged_.push_back({std::move(temp.path), path, temp.fd});
  return Status::ok();
}

Status FileTransaction::stage(const std::string& path, std::span<const std::byte> bytes) {
  return stage(path, [bytes](const ChunkWriter& write) { return write(bytes); });
}

Status FileTransaction::commit() {
  std::vector<Staged> files = std::move(staged_);
  staged_.clear();
  createdFolders_.clear();  // they hold the targets now
  Status status;
  for (const auto& file : files) {
    const TempFile temp{file.fd, file.temp};
    if (status.isOk()) status = publish(temp, file.target);
    if (status.isOk()) {
      ::close(temp.fd);
    } else {
      discard(temp);
    }
  }
  return status;
}

std::vector<std::string> FileTransaction::targets() const {
  std::vector<std::string> out;
  for (const auto& file : staged_) out.push_back(file.target);
  return out;
}

Status writeFileAtomically(const std::string& path, std::span<const std::byte> bytes) {
  return writeFileAtomically(path, [bytes](const auto& write) { return write(bytes); });
}

}  // namespace kiln
