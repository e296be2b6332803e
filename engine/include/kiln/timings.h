// The timing breakdown and work counters of a session: one structure, read by the CLI, the studio and the bench.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <functional>
#include <string_view>

namespace kiln {

// Milliseconds per stage; forEachTiming gives each field's key (its name, e.g. "glslang_ms") as the CLI and JSON print it.
struct KILN_EXPORT SessionTimings {
  double load_ms = 0;
  double shape_inference_ms = 0;
  double optimize_ms = 0;
  double partition_ms = 0;
  double device_create_ms = 0;
  double kernel_select_ms = 0;
  double autotune_ms = 0;
  double glslang_ms = 0;
  double pipeline_create_ms = 0;
  double weight_prepack_ms = 0;
  double weight_upload_ms = 0;
  double binary_read_ms = 0;
  double binary_validate_ms = 0;
  double session_total_ms = 0;
  double first_run_ms = 0;
};

// Work done during session creation: proof that a cached load skipped the work.
struct KILN_EXPORT WorkCounters {
  int64_t glslang_compiles = 0;
  int64_t optimizer_passes_run = 0;
  int64_t weights_prepacked = 0;
  int64_t pipelines_created = 0;
  int64_t pipeline_cache_hits = 0;
  int64_t pipeline_cache_misses = 0;
  int64_t spirv_cache_hits = 0;
  int64_t pipeline_cache_fallbacks = 0;  // pipelines rebuilt cold (fresh SPIR-V, no VkPipelineCache) after a failure
};

// Bytes a session's runs copied between host memory and device memory (Session::transfers()).
struct KILN_EXPORT TransferCounters {
  uint64_t hostToDeviceBytes = 0;
  uint64_t deviceToHostBytes = 0;
};

// Visits every timing as (key, value), in the order of the fields above.
KILN_EXPORT void forEachTiming(const SessionTimings& timings, const std::function<void(std::string_view, double)>& visit);
// Visits every counter as (key, value), in the order of the fields above.
KILN_EXPORT void forEachCounter(const WorkCounters& counters, const std::function<void(std::string_view, int64_t)>& visit);

}  // namespace kiln
