// SessionOptions: config entries (ONNX Runtime's keys plus Kiln's own under "kiln."), progress and cancellation.
#pragma once

#include "kiln/export.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compile_outputs.h"
#include "kiln/progress.h"
#include "kiln/status.h"

namespace kiln {

// How much generic graph optimization runs before partitioning (kiln.graph_optimization_level).
enum class GraphOptimizationLevel { NONE, BASIC, ALL };

// "none", "basic" or "all": the spelling in config entries and JSON.
KILN_EXPORT const char* graphOptimizationLevelName(GraphOptimizationLevel level);
// Parses a spelling of graphOptimizationLevelName; INVALID_ARGUMENT naming kiln.graph_optimization_level otherwise.
KILN_EXPORT Result<GraphOptimizationLevel> parseGraphOptimizationLevel(const std::string& text);


class KILN_EXPORT SessionOptions {
 public:
  // Sets a config entry. An unknown "kiln.*" key is INVALID_ARGUMENT; an unknown "session.*"/"ep.*" key is
  // accepted with a warning naming the nearest known key.
  Status addConfigEntry(const std::string& key, const std::string& value);
  // The value of a config entry, if set.
  std::optional<std::string> configEntry(const std::string& key) const;
  // The value, or `fallback` when unset.
  std::string configEntryOr(const std::string& key, const std::string& fallback) const;
  // Every config entry set, by key.
  const std::map<std::string, std::string>& configEntries() const { return entries_; }

  // Fixes the shape of the model input `name` (every dimension, symbolic ones included); replaces an earlier shape
  // for that input. Checked when the session loads the model: a name that is not a model input, a different rank, a
  // fixed dimension of another size, or two inputs giving one symbolic dimension different sizes (or a size other
  // than its kiln.free_dim_override entry) make creation fail with INVALID_ARGUMENT. A symbolic dimension fixed here
  // is fixed in every input that shares its name.
  void setInputShape(const std::string& name, std::vector<int64_t> dims);
  // The shapes given with setInputShape, by input name.
  const std::map<std::string, std::vector<int64_t>>& inputShapes() const { return inputShapes_; }

  // Supplies the bytes of the context binaries a ctx model names (embed mode 0) instead of reading files
  // (onnxruntime's experimental SetEpContextDataReadFunc): called with each ep_cache_context as written, once per
  // name; decrypt or fetch them from a store. Its error (or an exception) fails creation with that message; the
  // bytes are checked as a file's would be (format, hashes, the content id the model recorded). Unset: files.
  SessionOptions& setContextDataReadFunction(ContextDataReadFunc read);
  // The function setContextDataReadFunction set (empty when unset).
  const ContextDataReadFunc& contextDataReadFunction() const { return contextDataRead_; }

  // Progress callback and cancellation token used during session creation and runs.
  ProgressSink progress;

 private:
  std::map<std::string, std::string> entries_;
  std::map<std::string, std::vector<int64_t>> inputShapes_;
  ContextDataReadFunc contextDataRead_;
};

// Every config key Kiln knows, ONNX Runtime's and its own (sorted).
KILN_EXPORT const std::map<std::string, std::string>& knownConfigKeys();

}  // namespace kiln
