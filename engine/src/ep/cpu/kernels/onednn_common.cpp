#include "ep/cpu/kernels/onednn_common.h"

#include <omp.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "ep/cpu/kernels/gemm_helpers.h"

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

namespace kiln::cpu {

void oneDnnSgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);  // Kiln's pool splits the product, not OpenMP
  // Arguments are checked by the callers (row-major, K > 0, leading dimensions from the tensors): no failure to see.
  dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {
std::atomic<bool> gSgemmWarm{false};
}  // namespace

void warmUpSgemm() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A product large enough for the JIT path (tiny ones take oneDNN's reference loops and generate nothing).
    constexpr int64_t M = 16, N = 1024, K = 27;
    std::vector<float> a(M * K, 0.f), b(K * N, 0.f), c(M * N, 0.f);
    oneDnnSgemm(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N);
    gSgemmWarm.store(true, std::memory_order_release);
  });
}

bool sgemmWarm() { return gSgemmWarm.load(std::memory_order_acquire); }

}  // namespace kiln::cpu
