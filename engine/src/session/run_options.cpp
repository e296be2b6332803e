#include "kiln/run_options.h"

namespace kiln {

RunOptions::RunOptions() : terminate_(std::make_shared<CancellationToken>()) {}

void RunOptions::setTerminate() { terminate_->cancel(); }

void RunOptions::unsetTerminate() { terminate_->reset(); }

bool RunOptions::terminateRequested() const { return terminate_->isCancelled(); }

RunOptions& RunOptions::setCancellationToken(std::shared_ptr<CancellationToken> token) {
  terminate_ = token ? std::move(token) : std::make_shared<CancellationToken>();
  return *this;
}

RunOptions& RunOptions::setTag(std::string tag) {
  tag_ = std::move(tag);
  return *this;
}

RunOptions& RunOptions::setOutputNames(std::vector<std::string> names) {
  outputNames_ = std::move(names);
  return *this;
}

RunOptions& RunOptions::setProfiling(bool enabled) {
  profiling_ = enabled;
  return *this;
}

}  // namespace kiln
