// Progress of long work on stderr (engine/ARCHITECTURE.md, CLI conventions: progress only on stderr). On a terminal, one
// bar redrawn in place; otherwise (logs, CI, pipes) plain lines: one when a stage starts ("kiln: glslang (10)") and,
// for stages of 4 steps or more, one at each quarter of it, so a log stays short and reads the same run after run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kiln/progress.h"

namespace kiln::cli {

class ProgressDisplay {
 public:
  // `enabled` false (--quiet) shows nothing; `terminal` defaults to whether stderr is one.
  explicit ProgressDisplay(bool enabled);
  ProgressDisplay(bool enabled, bool terminal);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void update(const ProgressEvent& event);
  // Erases the bar (terminal) so a line can go to the terminal; the next update redraws it.
  void clear();
  // Ends the bar's line (terminal); a plain display has nothing to end.
  void finish();
  // For SessionOptions::progress.onProgress: forwards here (the display must outlive the work).
  std::function<void(const ProgressEvent&)> callback();

 private:
  bool enabled_;
  bool terminal_;
  bool barDrawn_ = false;
  std::string stage_;
  int quartersShown_ = 0;
};

}  // namespace kiln::cli
