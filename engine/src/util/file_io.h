// File helpers: whole-file reads with clear statuses, and atomic writes (temp file + fsync + rename).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// OK when `path` names a regular file (symlinks followed). NO_SUCHFILE when nothing is there; INVALID_ARGUMENT
// "... is not a regular file (a folder)" for a folder, FIFO, socket or device. Never opens it, so a FIFO cannot block.
Status checkRegularFile(const std::string& path);

// Reads a whole regular file (never a blocking open). NO_SUCHFILE when it does not exist; INVALID_ARGUMENT when it
// is not a regular file (checkRegularFile).
Result<std::vector<std::byte>> readFileBytes(const std::string& path);

// Writes `path` atomically: `produce` writes into a temp file in the same folder, which is flushed, fsynced and
// renamed over `path` only if `produce` returns OK. A failure leaves `path` untouched and no temp file behind; the
// temp file is anonymous (O_TMPFILE) where the filesystem allows, so a SIGKILL while writing leaves none; one that
// lands between naming the temp and the rename (or any SIGKILL without O_TMPFILE) can leave ".<name>.tmp.<pid>.*",
// which the next write of `path` removes once that pid no longer runs.
Status writeFileAtomically(const std::string& path,
                           const std::function<Status(const std::function<Status(std::span<const std::byte>)>&)>& produce);
// Convenience: atomically writes `bytes` to `path`.
Status writeFileAtomically(const std::string& path, std::span<const std::byte> bytes);

// Completes the multi-file commits in the folder of `path` whose writer died between two renames (SIGKILL, a crash):
// each journal left by a writer that no longer runs has the rest of its staged files renamed over their targets, so
// the folder holds the new outputs whole, then goes. Every stage() calls it, and so does every model load from a
// path, so no reader through Kiln sees a new context binary beside the old ctx model. Best effort: a folder that
// cannot be written stays as it is (the ctx model's binary hash check still refuses a mixed pair).
void finishInterruptedCommits(const std::string& path);

// Removes the temp files of `target` (".<name>.tmp.<pid>.*") left by writers that no longer run, as every write of
// `target` does first: for a caller that finds `target` current and writes nothing (kiln compile's no-op).
void removeTempsOfDeadWriters(const std::string& target);

using ChunkWriter = std::function<Status(std::span<const std::byte>)>;

// Several files written as one outcome (an EPContext model, its context binary, its external initializers):
// stage() writes each to a fsynced temp file beside its target (creating missing folders; first removing the
// target's temps left by killed writers, as writeFileAtomically says); commit() renames them
// all. Destroying the transaction before commit() removes the temps and the folders it created, so a failed or
// cancelled job leaves every target untouched and no new folder behind.
class FileTransaction {
 public:
  FileTransaction() = default;
  FileTransaction(const FileTransaction&) = delete;
  FileTransaction& operator=(const FileTransaction&) = delete;
  ~FileTransaction();

  Status stage(const std::string& path, const std::function<Status(const ChunkWriter&)>& produce);
  Status stage(const std::string& path, std::span<const std::byte> bytes);
  // Renames every staged file over its target, in staging order; `afterRename` (tests: a kill between two renames)
  // runs after each. Several files commit through a journal: a writer killed between two renames leaves one, and
  // finishInterruptedCommits completes it.
  Status commit(const std::function<void(const std::string& target)>& afterRename = nullptr);
  // The targets staged so far.
  std::vector<std::string> targets() const;

 private:
  struct Staged {
    std::string temp, target;  // temp is empty for an anonymous (O_TMPFILE) file
    int fd = -1;               // open until commit() or the destructor
  };
  std::vector<Staged> staged_;
  std::vector<std::string> createdFolders_;  // removed (when still empty) unless committed
};

}  // namespace kiln
