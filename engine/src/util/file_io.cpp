#include "util/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace kiln {

Result<std::vector<std::byte>> readFileBytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status(StatusCode::NO_SUCHFILE, "file not found: " + path);
  if (std::filesystem::is_directory(path, ec)) return Status(StatusCode::NO_SUCHFILE, "is a directory: " + path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot open " + path + ": " + std::strerror(errno));
  const std::streamsize size = in.tellg();
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    return Status(StatusCode::FAIL, "cannot read " + path);
  }
  return bytes;
}

Status writeFileAtomically(
    const std::string& path,
    const std::function<Status(const std::function<Status(std::span<const std::byte>)>&)>& produce) {
  namespace fs = std::filesystem;
  const fs::path target(path);
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
  std::error_code ec;
  if (status.isOk()) {
    fs::rename(temp, target, ec);
    if (ec) status = Status(StatusCode::FAIL, "cannot rename " + temp.string() + " to " + path + ": " + ec.message());
  }
  if (!status.isOk()) fs::remove(temp, ec);
  return status;
}

Status writeFileAtomically(const std::string& path, std::span<const std::byte> bytes) {
  return writeFileAtomically(path, [bytes](const auto& write) { return write(bytes); });
}

}  // namespace kiln
