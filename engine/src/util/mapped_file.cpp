#include "util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/file_io.h"

namespace kiln {

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  // Before the open: a FIFO would block it; a missing file is left to the open's own message.
  if (Status regular = checkRegularFile(path); regular.code() == StatusCode::INVALID_ARGUMENT) return regular;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::NO_SUCHFILE, "cannot open " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode) || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status(StatusCode::INVALID_ARGUMENT, "'" + path + "' is not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(info.st_size);
  if (file->size_ > 0) {
    void* address = ::mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return Status(StatusCode::FAIL, "cannot map " + path + ": " + std::strerror(error));
    }
    file->data_ = static_cast<std::byte*>(address);
  }
  ::close(fd);  // the mapping keeps the file alive
  return file;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace kiln
