#include "progress_display.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kiln::cli {

constexpr int64_t kQuarterLinesFrom = 4;

ProgressDisplay::ProgressDisplay(bool enabled) : ProgressDisplay(enabled, isatty(STDERR_FILENO) == 1) {}

ProgressDisplay::ProgressDisplay(bool enabled, bool terminal) : enabled_(enabled), terminal_(terminal) {}

ProgressDisplay::~ProgressDisplay() { finish(); }

void ProgressDisplay::update(const ProgressEvent& event) {
  if (!enabled_) return;
  const bool newStage = event.stage != stage_;
  if (newStage) {
    stage_ = event.stage;
    quartersShown_ = 0;
  }
  if (terminal_) {
    constexpr int kWidth = 24;
    const double fraction = event.total > 0 ? std::clamp(double(event.done) / double(event.total), 0.0, 1.0) : 0.0;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, event.total > 0 ? '.' : ' ');
    std::string label = event.stage;
    if (label.size() > 48) label = "..." + label.substr(label.size() - 45);
    std::fprintf(stderr, "\r\033[K[%s] %s", bar.c_str(), label.c_str());
    if (event.total > 0) std::fprintf(stderr, " %lld/%lld", static_cast<long long>(event.done),
                                      static_cast<long long>(event.total));
    std::fflush(stderr);
    barDrawn_ = true;
    return;
  }
  if (newStage) {
    if (event.total > 1) {
      std::fprintf(stderr, "kiln: %s (%lld)\n", stage_.c_str(), static_cast<long long>(event.total));
    } else {
      std::fprintf(stderr, "kiln: %s\n", stage_.c_str());
    }
  }
  // Quarters only say something for a stage of several steps.
  if (event.total < kQuarterLinesFrom) return;
  // Every quarter crossed since the last line, so the same work prints the same lines however events batch up.
  const int quarters = static_cast<int>(std::clamp<int64_t>(event.done * 4 / event.total, 0, 4));
  for (int q = quartersShown_ + 1; q <= quarters; ++q) std::fprintf(stderr, "kiln: %s %d%%\n", stage_.c_str(), q * 25);
  quartersShown_ = std::max(quartersShown_, quarters);
}

void ProgressDisplay::clear() {
  if (barDrawn_) std::fprintf(stderr, "\r\033[K");
  barDrawn_ = false;
}

void ProgressDisplay::finish() {
  if (barDrawn_) std::fprintf(stderr, "\r\033[K");
  barDrawn_ = false;
  stage_.clear();
  quartersShown_ = 0;
}

std::function<void(const ProgressEvent&)> ProgressDisplay::callback() {
  return [this](const ProgressEvent& event) { update(event); };
}

}  // namespace kiln::cli
