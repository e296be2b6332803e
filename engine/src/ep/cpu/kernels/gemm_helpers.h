// Private helpers for the CPU linear-algebra kernels (math, conv): one GEMM entry point for every element
// type, reusable per-thread scratch buffers and half-precision conversion.
#pragma once

#include <cblas.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/skinny_gemm.h"
#include "ep/cpu/thread_pool.h"
#include "kiln/tensor.h"

// Hot float loops are compiled twice, for the x86-64 baseline the engine is built for and for AVX2+FMA, and
// the twin is picked at run time: mark the fast twin KILN_AVX2_TARGET and choose with cpuHasAvx2Fma().
// (GCC 12's target_clones("arch=...") dispatches on CPU model names, not features, so it is not used.)
#if defined(__x86_64__) && defined(__GNUC__)
#define KILN_AVX2_TARGET __attribute__((target("avx2,fma")))
inline bool cpuHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#else
#define KILN_AVX2_TARGET
inline bool cpuHasAvx2Fma() { return false; }
#endif
// Forces inlining into a KILN_AVX2_TARGET caller, so the body is compiled for each of its targets.
#if defined(__GNUC__)
#define KILN_ALWAYS_INLINE __attribute__((always_inline))
#else
#define KILN_ALWAYS_INLINE
#endif

namespace kiln::cpu {

// C = alpha * op(A) * op(B) + beta * C (row-major, K > 0) on one thread with oneDNN's sgemm, which dispatches on the
// CPU's real ISA (AVX-512 where the CPU has it) whatever OPENBLAS_CORETYPE says. Measured in one run on this
// project's AMD EPYC (Zen 5, AVX-512) machines with OPENBLAS_CORETYPE=Haswell, kiln_bench 2 threads: PP-OCRv4 det
// 41.2 -> 28.5 ms, the float16 IS-Net 3.91 -> 3.22 s against OpenBLAS's sgemm.
void oneDnnSgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc);
// Has oneDNN generate its sgemm JIT kernels now, which it does on the first real sgemm call of a process (measured
// 32-38 ms on this project's AMD EPYCs, most of a first inference's extra time): once per process, on any thread;
// later calls return at once. sgemmWarm() says whether it has completed.
void warmUpSgemm();
bool sgemmWarm();

// C[M x N] = alpha * op(A) * op(B) + beta * C on row-major matrices; lda/ldb/ldc are the stored row strides.
// float goes to oneDNN's sgemm (oneDnnSgemm; products with a side of at most kSkinnyMax to skinnyGemm), double to
// OpenBLAS; integer types use a plain loop (exact, wrapping like ONNX Runtime).
// Half types are not accepted: callers convert them to float first.
template <class T>
void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
          const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  static_assert(std::is_arithmetic_v<T>, "gemm takes float, double or integer elements");
  if (M <= 0 || N <= 0) return;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (K > 0) {
      if constexpr (std::is_same_v<T, float>) {
        if (skinnyGemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
        oneDnnSgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      } else {
        const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans, tb = transB ? CblasTrans : CblasNoTrans;
        cblas_dgemm(CblasRowMajor, ta, tb, static_cast<blasint>(M), static_cast<blasint>(N),
                    static_cast<blasint>(K), alpha, A, static_cast<blasint>(lda), B,
                    static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
      }
      return;
    }
  }
  // Generic path (and K == 0 for floats, which BLAS rejects): scale C, then accumulate row by row.
  for (int64_t i = 0; i < M; ++i) {
    T* c = C + i * ldc;
    for (int64_t j = 0; j < N; ++j) c[j] = beta == T(0) ? T(0) : static_cast<T>(beta * c[j]);
    for (int64_t k = 0; k < K; ++k) {
      const T a = static_cast<T>(alpha * (transA ? A[k * lda + i] : A[i * lda + k]));
      if (a == T(0)) continue;
      if (transB) {
        for (int64_t j = 0; j < N; ++j) c[j] += a * B[j * ldb + k];
      } else {
        const T* b = B + k * ldb;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  }
}

// gemm() split over `pool`'s threads: by rows of C, or by columns when C has few rows; every part is an
// independent single-threaded BLAS call on its own slice of C. Small products run as one call.
template <class T>
void parallelGemm(ThreadPool* pool, bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                  int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  constexpr int64_t kMinMultiplyAdds = int64_t{1} << 18;
  const int64_t threads = pool ? pool->threads() : 1;
  if (threads < 2 || M * N * std::max<int64_t>(K, 1) < kMinMultiplyAdds) {
    gemm<T>(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const int64_t parts = 2 * threads;
  if (M >= 8 * threads) {
    pool->parallelFor(M, std::max<int64_t>(8, (M + parts - 1) / parts), [&](int64_t i0, int64_t i1) {
      gemm<T>(transA, transB, i1 - i0, N, K, alpha, transA ? A + i0 : A + i0 * lda, lda, B, ldb, beta, C + i0 * ldc,
              ldc);
    });
  } else {
    pool->parallelFor(N, std::max<int64_t>(64, (N + parts - 1) / parts), [&](int64_t j0, int64_t j1) {
      gemm<T>(transA, transB, M, j1 - j0, K, alpha, A, lda, transB ? B + j0 * ldb : B + j0, ldb, beta, C + j0, ldc);
    });
  }
}

// A 64-byte aligned per-thread buffer of at least `count` T, reused across calls (contents are not
// preserved). `slot` (0..3) keeps buffers that are live at the same time apart.
template <class T>
T* scratchBuffer(size_t count, int slot = 0) {
  struct FreeDeleter {
    void operator()(std::byte* p) const { std::free(p); }
  };
  struct Slot {
    std::unique_ptr<std::byte, FreeDeleter> data;
    size_t bytes = 0;
  };
  thread_local Slot slots[4];
  Slot& s = slots[slot];
  const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
  if (bytes > s.bytes) {
    s.data.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes)));
    s.bytes = s.data ? bytes : 0;
  }
  return reinterpret_cast<T*>(s.data.get());
}

// True for the storage-only float types that compute through float.
template <class T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Copies `count` elements of `src` into a float tensor (used to run half-precision ops through float
// kernels).
template <class T>
Tensor toFloatTensor(const Tensor& src) {
  Tensor out(DataType::FLOAT, src.shape());
  const T* s = src.data<T>();
  float* d = out.data<float>();
  for (int64_t i = 0, n = src.numel(); i < n; ++i) d[i] = static_cast<float>(s[i]);
  return out;
}

// Writes a float tensor back as T (the inverse of toFloatTensor).
template <class T>
void fromFloatTensor(const Tensor& src, Tensor& dst) {
  const float* s = src.data<float>();
  T* d = dst.data<T>();
  for (int64_t i = 0, n = src.numel(); i < n; ++i) d[i] = T(s[i]);
}

}  // namespace kiln::cpu
