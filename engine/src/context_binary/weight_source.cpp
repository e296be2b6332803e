#include "context_binary/weight_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "context_binary/weights_section.h"
#include "util/file_io.h"

namespace kiln::ctxbin {
namespace {

// An open file descriptor, closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads `out.size()` bytes at `offset` of `fd` (short reads retried). FAIL naming `path` on an error or an early end.
Status readAt(int fd, const std::string& path, uint64_t offset, std::span<std::byte> out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status(StatusCode::FAIL, "cannot read weight data from '" + path + "': " + std::strerror(errno));
    if (n == 0) {
      return Status(StatusCode::FAIL, "weight data file '" + path + "' ends at " + std::to_string(offset + done) +
                                          ", before the weight's end");
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace

WeightSource WeightSource::inMemory(const Tensor& tensor) {
  WeightSource source;
  if (tensor.dtype() == DataType::STRING) {
    source.encoded_ = tensorBytes(tensor);
    source.size_ = source.encoded_.size();
  } else {
    source.tensor_ = tensor;
    source.size_ = tensor.byteSize();
  }
  return source;
}

WeightSource WeightSource::fileRange(std::string path, uint64_t offset, uint64_t size) {
  WeightSource source;
  source.path_ = std::move(path);
  source.offset_ = offset;
  source.size_ = size;
  return source;
}

Status WeightSource::read(uint64_t offset, std::span<std::byte> out) const {
  if (offset > size_ || out.size() > size_ - offset) {
    return Status(StatusCode::INVALID_ARGUMENT, "read past the end of a weight of " + std::to_string(size_) + " bytes");
  }
  if (path_.empty()) {
    const auto* data = encoded_.empty() ? static_cast<const std::byte*>(tensor_.rawData()) : encoded_.data();
    if (!out.empty()) std::memcpy(out.data(), data + offset, out.size());
    return Status::ok();
  }
  KILN_RETURN_IF_ERROR(checkRegularFile(path_).withContext("weight data"));  // a FIFO would block the open
  Fd file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    return Status(errno == ENOENT ? StatusCode::NO_SUCHFILE : StatusCode::FAIL,
                  "cannot open weight data file '" + path_ + "': " + std::strerror(errno));
  }
  return readAt(file.fd, path_, offset_ + offset, out);
}

std::optional<std::span<const std::byte>> WeightSource::memoryBytes() const {
  if (!path_.empty()) return std::nullopt;
  const auto* data = encoded_.empty() ? static_cast<const std::byte*>(tensor_.rawData()) : encoded_.data();
  return std::span(data, static_cast<size_t>(size_));
}

Status WeightSource::forEachChunk(const ChunkSink& sink) const {
  if (path_.empty()) {  // in memory: the chunks are views, nothing is copied
    const auto* data = encoded_.empty() ? static_cast<const std::byte*>(tensor_.rawData()) : encoded_.data();
    for (uint64_t at = 0; at < size_; at += kStreamChunkBytes) {
      KILN_RETURN_IF_ERROR(sink(std::span(data + at, static_cast<size_t>(std::min<uint64_t>(kStreamChunkBytes, size_ - at)))));
    }
    return Status::ok();
  }
  std::vector<std::byte> buffer(static_cast<size_t>(std::min<uint64_t>(kStreamChunkBytes, size_)));
  for (uint64_t at = 0; at < size_; at += buffer.size()) {
    const auto chunk = std::span(buffer).first(static_cast<size_t>(std::min<uint64_t>(buffer.size(), size_ - at)));
    KILN_RETURN_IF_ERROR(read(at, chunk));
    KILN_RETURN_IF_ERROR(sink(chunk));
  }
  return Status::ok();
}

Result<uint64_t> WeightSource::hash() const {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  KILN_RETURN_IF_ERROR(forEachChunk([&](std::span<const std::byte> chunk) {
    XXH3_64bits_update(state.get(), chunk.data(), chunk.size());
    return Status::ok();
  }));
  return static_cast<uint64_t>(XXH3_64bits_digest(state.get()));
}

Result<bool> sameBytes(const WeightSource& a, const WeightSource& b) {
  if (a.size() != b.size()) return false;
  const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kStreamChunkBytes, a.size()));
  std::vector<std::byte> left(chunk), right(chunk);
  for (uint64_t at = 0; at < a.size(); at += chunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, a.size() - at));
    KILN_RETURN_IF_ERROR(a.read(at, std::span(left).first(n)));
    KILN_RETURN_IF_ERROR(b.read(at, std::span(right).first(n)));
    if (std::memcmp(left.data(), right.data(), n) != 0) return false;
  }
  return true;
}

}  // namespace kiln::ctxbin
