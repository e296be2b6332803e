#include "ep/cpu/kernels/onednn_common.h"

#include <omp.h>

namespace kiln::cpu::onednn {

void setThreads(ThreadPool* pool, int64_t macs) {
  const int threads = pool && macs >= kParallelMacs ? pool->threads() : 1;
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

const dnnl::engine* cpuEngine() {
  static const std::unique_ptr<dnnl::engine> engine = []() -> std::unique_ptr<dnnl::engine> {
    try {
      return std::make_unique<dnnl::engine>(dnnl::engine::kind::cpu, 0);
    } catch (const dnnl::error&) {
      return nullptr;
    }
  }();
  return engine.get();
}

dnnl::memory::format_tag plainActivationTag(size_t spatialRank) {
  using tag = dnnl::memory::format_tag;
  return spatialRank == 1 ? tag::ncw : spatialRank == 2 ? tag::nchw : tag::ncdhw;
}

dnnl::memory::format_tag plainWeightsTag(size_t spatialRank) {
  using tag = dnnl::memory::format_tag;
  return spatialRank == 1 ? tag::goiw : spatialRank == 2 ? tag::goihw : tag::goidhw;
}

}  // namespace kiln::cpu::onednn
