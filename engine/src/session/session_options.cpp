#include "kiln/session_options.h"

#include <algorithm>
#include <vector>

#include "kiln/config_keys.h"
#include "kiln/tensor_size.h"
#include "optimizer/optimizer.h"
#include "session/session_config.h"
#include "util/log.h"

namespace kiln {

// The names are the optimizer's (optimizer/optimizer.h): one spelling for the key, the reports and the parser.
const char* graphOptimizationLevelName(GraphOptimizationLevel level) {
  return optimizer::optimizationLevelName(optimizerLevel(level));
}

Result<GraphOptimizationLevel> parseGraphOptimizationLevel(const std::string& text) {
  for (auto level : {GraphOptimizationLevel::NONE, GraphOptimizationLevel::BASIC, GraphOptimizationLevel::ALL}) {
    if (text == graphOptimizationLevelName(level)) return level;
  }
  return Status(StatusCode::INVALID_ARGUMENT,
                std::string(config::kGraphOptimizationLevel) + " must be none, basic or all, got '" + text + "'");
}

const std::map<std::string, std::string>& knownConfigKeys() {
  static const std::map<std::string, std::string> keys = [] {
    std::map<std::string, std::string> byKey;
    for (const auto& info : config::knownKeys()) byKey.emplace(info.key, info.meaning);
    return byKey;
  }();
  return keys;
}

namespace {

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearestKnownKey(const std::string& key) {
  std::string best;
  size_t bestDistance = SIZE_MAX;
  for (const auto& [known, _] : knownConfigKeys()) {
    const size_t d = editDistance(key, known);
    if (d < bestDistance) {
      bestDistance = d;
      best = known;
    }
  }
  return best;
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Status SessionOptions::addConfigEntry(const std::string& key, const std::string& value) {
  const bool known = knownConfigKeys().count(key) != 0 || startsWith(key, config::kFreeDimOverridePrefix);
  if (!known && startsWith(key, "kiln.")) {
    return Status(StatusCode::INVALID_ARGUMENT,
                  "unknown config key '" + key + "' (did you mean '" + nearestKnownKey(key) + "'?)");
  }
  if (!known && (startsWith(key, "session.") || startsWith(key, "ep."))) {
    log::warn("unknown config key '{}' (nearest known key: '{}')", key, nearestKnownKey(key));
  }
  if (key == kMaxTensorBytesKey) KILN_RETURN_IF_ERROR(parseMaxTensorBytes(value).status());
  entries_[key] = value;
  return Status::ok();
}

SessionOptions& SessionOptions::setContextDataReadFunction(ContextDataReadFunc read) {
  contextDataRead_ = std::move(read);
  return *this;
}

void SessionOptions::setInputShape(const std::string& name, std::vector<int64_t> dims) {
  inputShapes_[name] = std::move(dims);
}

std::optional<std::string> SessionOptions::configEntry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::string SessionOptions::configEntryOr(const std::string& key, const std::string& fallback) const {
  return configEntry(key).value_or(fallback);
}

}  // namespace kiln
