#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

// Writes a fresh, fsynced temp file beside `target`; returns its path. Nothing is left behind on failure.
Result<std::string> writeTempBeside(const std::filesystem::path& target,
                                    const std::function<Status(const ChunkWriter&)>& produce) {
  namespace fs = std::filesystem;
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Unique per process (pid), per call within it (a counter: threads saving the same path at once) and across
  // pid reuse (random); O_EXCL below still refuses a name that exists. Concurrent savers of one path therefore
  // never share a temp file, and the last rename wins with a complete file.
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  // Built by appending: GCC 12 at -O3 raises a false -Wrestrict on `"." + std::string` (GCC PR105329).
  std::string tempName(".");
  tempName += target.filename().string();
  tempName += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." + std::to_string(random());
  const fs::path temp = folder / tempName;
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::FAIL, "cannot create " + temp.string() + ": " + std::strerror(errno));
  auto writeChunk = [fd, &temp](std::span<const std::byte> chunk) -> Status {
    const std::byte* data = chunk.data();
    size_t left = chunk.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status(StatusCode::FAIL, "cannot write " + temp.string() + ": " + std::strerror(errno));
      data += n;
      left -= static_cast<size_t>(n);
    }
    return Status::ok();
  };
  Status status = produce(writeChunk);
  if (status.isOk() && ::fsync(fd) != 0) status = Status(StatusCode::FAIL, "fsync failed for " + temp.string());
  ::close(fd);
  if (!status.isOk()) {
    std::error_code ec;
    fs::remove(temp, ec);
    return status;
  }
  return temp.string();
}

}  // namespace

Status writeFileAtomically(const std::string& path, const std::function<Status(const ChunkWriter&)>& produce) {
  FileTransaction transaction;
  KILN_RETURN_IF_ERROR(transaction.stage(path, produce));
  return transaction.commit();
}

FileTransaction::~FileTransaction() {
  std::error_code ec;
  for (const auto& file : staged_) std::filesystem::remove(file.temp, ec);
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
  KILN_ASSIGN_OR_RETURN(std::string temp, writeTempBeside(path, produce));
  staged_.push_back({std::move(temp), path});
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
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    if (status.isOk()) {
      std::filesystem::rename(files[i].temp, files[i].target, ec);
      if (!ec) continue;
      status = Status(StatusCode::FAIL, "cannot rename " + files[i].temp + " to " + files[i].target + ": " + ec.message());
    }
    std::filesystem::remove(files[i].temp, ec);
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
