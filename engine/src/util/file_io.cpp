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

fs::path folderOf(const fs::path& target) { return target.has_parent_path() ? target.parent_path() : fs::path("."); }

// True when no process `pid` runs any more (a reused pid counts as alive: its files wait for a later write).
bool writerIsGone(long pid) {
  return pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// ".<name>.tmp.<pid>.<counter>.<random>" beside `target`: unique per process (pid), per call within it (a counter:
// threads saving the same path at once) and across pid reuse (random); O_EXCL / linkat still refuse a name that
// exists. Concurrent savers of one path therefore never share a temp file, and the last rename wins.
// A commit journal is named the same way with ".commit." in place of ".tmp.".
fs::path uniqueTempPath(const fs::path& target, const char* kind = ".tmp.") {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  // Built by appending: GCC 12 at -O3 raises a false -Wrestrict on `"." + std::string` (GCC PR105329).
  std::string tempName(".");
  tempName += target.filename().string();
  tempName += kind + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." + std::to_string(random());
  return folderOf(target) / tempName;
}

// An open temp file for `target`: anonymous (O_TMPFILE, `path` empty) where the folder's filesystem supports it, so
// that a process killed while writing (SIGKILL, no cleanup) leaves nothing behind; else a named file beside it.
struct TempFile {
  int fd = -1;
  std::string path;
};

Result<TempFile> createTemp(const fs::path& target) {
  const fs::path folder = folderOf(target);
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
void removeTempsOf(const fs::path& target) {
  const fs::path folder = folderOf(target);
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot) continue;
    if (!writerIsGone(std::strtol(rest.substr(0, dot).c_str(), nullptr, 10))) continue;
    std::error_code removeError;
    fs::remove(it->path(), removeError);
  }
}

// A commit journal: one line "kiln-commit 1", then "<temp name>\t<target name>" per file, in rename order; every
// name is a plain file name in the journal's own folder.
constexpr const char* kJournalHeader = "kiln-commit 1";

bool journalableName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of("/\t\n") == std::string::npos;
}

// Finishes the commit that journal `journal` describes: renames every staged file still there over its target, in
// order, then removes the journal. A journal that is not one of ours is left alone.
void rollForward(const fs::path& journal) {
  std::ifstream in(journal);
  std::string line;
  if (!std::getline(in, line) || line != kJournalHeader) return;
  std::vector<std::pair<std::string, std::string>> renames;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) return;
    renames.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    if (!journalableName(renames.back().first) || !journalableName(renames.back().second)) return;
  }
  const fs::path folder = journal.parent_path();
  std::error_code ec;
  for (const auto& [temp, target] : renames) {
    if (fs::exists(folder / temp, ec)) fs::rename(folder / temp, folder / target, ec);
  }
  fs::remove(journal, ec);
}

// The pid in a journal name ".<name>.commit.<pid>.<counter>.<random>", or 0 when `name` is not one.
long journalWriterPid(const std::string& name) {
  const size_t at = name.rfind(".commit.");
  if (name.size() < 2 || name[0] != '.' || at == 0 || at == std::string::npos) return 0;
  const std::string rest = name.substr(at + 8);  // "<pid>.<counter>.<random>"
  const size_t first = rest.find('.'), second = first == std::string::npos ? first : rest.find('.', first + 1);
  if (first == 0 || second == std::string::npos || second == first + 1 || second + 1 == rest.size() ||
      rest.find_first_not_of("0123456789.") != std::string::npos || rest.find('.', second + 1) != std::string::npos) {
    return 0;
  }
  return std::strtol(rest.substr(0, first).c_str(), nullptr, 10);
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

// Gives an anonymous temp file a unique name beside `target` (a named one keeps its name). From here until its
// rename, a kill leaves the named file behind (removeTempsOfDeadWriters, or a commit journal, deals with it).
Status nameTemp(TempFile& temp, const std::string& target) {
  if (!temp.path.empty()) return Status::ok();
  const std::string named = uniqueTempPath(target).string();
  const std::string source = "/proc/self/fd/" + std::to_string(temp.fd);
  if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, named.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    return Status(StatusCode::FAIL, "cannot link the temporary file for " + target + ": " + std::strerror(errno));
  }
  temp.path = named;
  return Status::ok();
}

Status renameOver(const std::string& named, const std::string& target) {
  std::error_code ec;
  fs::rename(named, target, ec);
  if (!ec) return Status::ok();
  fs::remove(named, ec);
  return Status(StatusCode::FAIL, "cannot rename " + named + " to " + target + ": " + ec.message());
}

void syncFolder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// Writes the journal of a commit of `files` (every target in one folder; their temps named): a whole, fsynced file
// that appears under its name at once. Returns its path, or "" when the commit cannot be journaled (targets in
// several folders, names a line-based journal cannot hold), in which case the renames run unjournaled.
Result<std::string> writeJournal(const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path folder = folderOf(files.back().second);
  std::string text = std::string(kJournalHeader) + "\n";
  for (const auto& [temp, target] : files) {
    const fs::path tempPath(temp), targetPath(target);
    if (folderOf(tempPath) != folder || folderOf(targetPath) != folder) return std::string();
    const std::string tempName = tempPath.filename().string(), targetName = targetPath.filename().string();
    if (!journalableName(tempName) || !journalableName(targetName)) return std::string();
    text += tempName + "\t" + targetName + "\n";
  }
  const fs::path target = files.back().second;
  KILN_ASSIGN_OR_RETURN(TempFile journal, writeTempFor(target, [&text](const ChunkWriter& write) {
    return write(std::as_bytes(std::span(text.data(), text.size())));
  }));
  std::string named = journal.path;
  Status status = Status::ok();
  if (named.empty()) {  // anonymous: appears whole under the journal name
    named = uniqueTempPath(target, ".commit.").string();
    const std::string source = "/proc/self/fd/" + std::to_string(journal.fd);
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, named.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      status = Status(StatusCode::FAIL, "cannot write the commit journal for " + target.string() + ": " +
                                            std::strerror(errno));
    }
  } else {  // a named temp ".<name>.tmp.*" is renamed to the journal name once whole
    const std::string journalName = uniqueTempPath(target, ".commit.").string();
    status = renameOver(named, journalName);
    named = journalName;
  }
  ::close(journal.fd);
  if (!status.isOk()) return status;
  syncFolder(folder);
  return named;
}

}  // namespace

void finishInterruptedCommits(const std::string& path) {
  const fs::path folder = folderOf(path);
  std::error_code ec;
  std::vector<fs::path> journals;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (writerIsGone(journalWriterPid(name))) journals.push_back(it->path());
  }
  for (const auto& journal : journals) rollForward(journal);
}


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
  finishInterruptedCommits(path);  // before the sweep: a dead writer's journal still needs its temps
  removeTempsOf(path);
  KILN_ASSIGN_OR_RETURN(TempFile temp, writeTempFor(path, produce));
  staged_.push_back({std::move(temp.path), path, temp.fd});
  return Status::ok();
}

Status FileTransaction::stage(const std::string& path, std::span<const std::byte> bytes) {
  return stage(path, [bytes](const ChunkWriter& write) { return write(bytes); });
}

// One file: a rename, atomic by itself. Several: every temp gets its name, then a journal listing the renames
// appears (the commit point), then the renames run and the journal goes. A writer killed between two renames leaves
// the journal; the next stage() in that folder, or the next load of a model there, finishes the renames
// (finishInterruptedCommits), so no reader through Kiln sees the new binary beside the old ctx model.
Status FileTransaction::commit(const std::function<void(const std::string&)>& afterRename) {
  std::vector<Staged> files = std::move(staged_);
  staged_.clear();
  createdFolders_.clear();  // they hold the targets now
  std::vector<TempFile> temps;
  for (const auto& file : files) temps.push_back(TempFile{file.fd, file.temp});
  auto discardAll = [&temps]() {
    for (const auto& temp : temps) discard(temp);
  };
  std::string journal;
  if (files.size() > 1) {
    std::vector<std::pair<std::string, std::string>> renames;
    for (size_t i = 0; i < files.size(); ++i) {
      if (Status status = nameTemp(temps[i], files[i].target); !status.isOk()) {
        discardAll();
        return status;
      }
      renames.emplace_back(temps[i].path, files[i].target);
    }
    Result<std::string> written = writeJournal(renames);
    if (!written.isOk()) {
      discardAll();
      return written.status();
    }
    journal = *written;
  }
  Status status;
  for (size_t i = 0; i < files.size(); ++i) {
    if (status.isOk()) status = nameTemp(temps[i], files[i].target);
    if (status.isOk()) status = renameOver(temps[i].path, files[i].target);
    if (status.isOk()) {
      ::close(temps[i].fd);
      if (afterRename) afterRename(files[i].target);
    } else {
      discard(temps[i]);
    }
  }
  std::error_code ec;
  if (!journal.empty()) fs::remove(journal, ec);
  return status;
}

std::vector<std::string> FileTransaction::targets() const {
  std::vector<std::string> out;
  for (const auto& file : staged_) out.push_back(file.target);
  return out;
}

void removeTempsOfDeadWriters(const std::string& target) { removeTempsOf(target); }

Status writeFileAtomically(const std::string& path, std::span<const std::byte> bytes) {
  return writeFileAtomically(path, [bytes](const auto& write) { return write(bytes); });
}

}  // namespace kiln
