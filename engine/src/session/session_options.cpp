#include "kiln/session_options.h"

#include <algorithm>
#include <vector>

#include "kiln/tensor_size.h"
#include "util/log.h"

namespace kiln {

const std::map<std::string, std::string>& knownConfigKeys() {
  // key -> one-line meaning. ONNX Runtime's keys keep their names; Kiln's own live under "kiln.".
  static const std::map<std::string, std::string> keys = {
      {"session.model_external_initializers_file_folder_path", "folder external data resolves against"},
      {"session.disable_cpu_ep_fallback", "1: a node the preferred EPs cannot run is an error"},
      {"session.fail_on_suboptimal_compiled_model", "1: a 'compatible' (not optimal) context binary is FAIL"},
      {"session.disable_model_compile", "1: a model that needs compilation is MODEL_REQUIRES_COMPILATION"},
      {"session.compile_only", "1: compile and write EPContext output without running"},
      {"session.intra_op_num_threads", "CPU threads (ONNX Runtime's SessionOptions field)"},
      {"ep.context_enable", "1: write an EPContext model after compiling"},
      {"ep.context_file_path", "path of the EPContext model to write"},
      {"ep.context_embed_mode", "1: embed the context binary in the EPContext node"},
      {"ep.context_node_name_prefix", "prefix for EPContext node and partition names"},
      {"ep.context_model_external_initializers_file_name", "external file for CPU-fallback initializers"},
      {"ep.context_source_model_path", "path of the source model when compiling from a buffer"},
      {"ep.share_ep_contexts", "1: sessions share EP contexts (weight sharing)"},
      {"ep.stop_share_ep_contexts", "1: the last session of a sharing group"},
      {"ep.enable_weightless_ep_context_nodes", "EPContext nodes without weights"},
      {"kiln.execution_providers", "EPs in preference order (default vulkan,cpu)"},
      {"kiln.intra_op_num_threads", "CPU EP threads (0 = default: one per logical core, at most 16)"},
      {"kiln.graph_optimization_level", "none | basic | all"},
      {"kiln.vulkan.device", "Vulkan device index or name substring"},
      {"kiln.vulkan.autotune", "1: time candidate kernel configurations on the first run, keep the fastest"},
      {"kiln.vulkan.pipeline_cache_path", "Vulkan pipeline cache file"},
      {"kiln.vulkan.target_profile", "device profile JSON to compile for"},
      {"kiln.vulkan.fp16", "1: float16 storage (not implemented yet: warns)"},
      {"kiln.vulkan.profile", "1: time every dispatch with timestamp queries and log a table per op type"},
      {"kiln.max_tensor_bytes", "the most bytes one tensor may take (default 2147483648 = 2 GiB)"},
  };
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
  const bool known = knownConfigKeys().count(key) != 0 || startsWith(key, "kiln.free_dim_override.");
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

std::optional<std::string> SessionOptions::configEntry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::string SessionOptions::configEntryOr(const std::string& key, const std::string& fallback) const {
  return configEntry(key).value_or(fallback);
}

}  // namespace kiln
