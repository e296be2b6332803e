#include "kiln/timings.h"
#include "kiln/version.h"

namespace kiln {

const char* engineVersion() { return KILN_VERSION; }

void forEachTiming(const SessionTimings& t, const std::function<void(std::string_view, double)>& visit) {
  visit("load_ms", t.load_ms);
  visit("shape_inference_ms", t.shape_inference_ms);
  visit("optimize_ms", t.optimize_ms);
  visit("partition_ms", t.partition_ms);
  visit("device_create_ms", t.device_create_ms);
  visit("kernel_select_ms", t.kernel_select_ms);
  visit("autotune_ms", t.autotune_ms);
  visit("glslang_ms", t.glslang_ms);
  visit("pipeline_create_ms", t.pipeline_create_ms);
  visit("weight_prepack_ms", t.weight_prepack_ms);
  visit("weight_upload_ms", t.weight_upload_ms);
  visit("binary_read_ms", t.binary_read_ms);
  visit("binary_validate_ms", t.binary_validate_ms);
  visit("session_total_ms", t.session_total_ms);
  visit("first_run_ms", t.first_run_ms);
}

void forEachCounter(const WorkCounters& c, const std::function<void(std::string_view, int64_t)>& visit) {
  visit("glslang_compiles", c.glslang_compiles);
  visit("optimizer_passes_run", c.optimizer_passes_run);
  visit("weights_prepacked", c.weights_prepacked);
  visit("pipelines_created", c.pipelines_created);
  visit("pipeline_cache_hits", c.pipeline_cache_hits);
  visit("pipeline_cache_misses", c.pipeline_cache_misses);
  visit("spirv_cache_hits", c.spirv_cache_hits);
  visit("pipeline_cache_fallbacks", c.pipeline_cache_fallbacks);
}

}  // namespace kiln
