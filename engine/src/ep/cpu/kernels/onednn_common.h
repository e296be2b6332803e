// What Kiln's oneDNN kernels (onednn_int8, onednn_conv) share: the process-wide engine, the OpenMP thread count per
// primitive, plan bookkeeping and the plain layouts Kiln's tensors have. oneDNN's C++ API throws dnnl::error: these
// helpers never let it escape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "ep/cpu/thread_pool.h"

namespace kiln::cpu::onednn {

// Plans kept per packed operator (one per distinct input shape seen); the oldest is dropped beyond this.
inline constexpr size_t kMaxPlans = 8;

// Multiply-adds below which a primitive runs on one OpenMP thread: libgomp's team spins beside Kiln's own pool, and
// on a busy 2-core machine waking it costs more than it saves below a few ms of work. Measured there (kiln_bench,
// 2 threads): the generated quantized U-Net 256x256 took 179 ms with every primitive on 2 OpenMP threads, 66-96 ms
// from 2^25, 50 ms from 2^28, 32-51 ms on 1 thread; PP-OCRv4 det's float convs on oneDNN took 6 s per run from 2^22.
inline constexpr int64_t kParallelMacs = int64_t{1} << 28;

// Debian's oneDNN runs on OpenMP: primitives use the OpenMP thread count of the thread that executes them, fixed
// when the primitive is created. Sets it to the session's intra-op thread count, or 1 for work below kParallelMacs.
void setThreads(ThreadPool* pool, int64_t macs);

// The process-wide CPU engine; null when oneDNN cannot create one.
const dnnl::engine* cpuEngine();

// True for oneDNN's reference implementations: correct but slower than Kiln's own loops, so such shapes stay there.
inline bool isReferenceImplementation(const std::string& implementation) { return implementation.rfind("ref", 0) == 0; }

// Keeps `plan` among an operator's plans, dropping the oldest beyond kMaxPlans.
template <class Plan>
void rememberPlan(std::vector<std::shared_ptr<Plan>>& plans, std::shared_ptr<Plan> plan) {
  if (plans.size() >= kMaxPlans) plans.erase(plans.begin());
  plans.push_back(std::move(plan));
}

// Kiln's activation layout (N, C, spatial...) and plain grouped weights (G, O, I, kernel...) for 1-3 spatial dims.
dnnl::memory::format_tag plainActivationTag(size_t spatialRank);
dnnl::memory::format_tag plainWeightsTag(size_t spatialRank);

}  // namespace kiln::cpu::onednn
