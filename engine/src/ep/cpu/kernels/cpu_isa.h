// Runtime ISA dispatch of the CPU kernels' hot float loops beyond AVX2: a loop body written once is compiled as an
// AVX-512 twin (KILN_AVX512_TARGET) beside the baseline and AVX2 ones, and cpuHasAvx512() picks it where the CPU
// has AVX-512F. Each twin does exactly the float operations of its AVX2 sibling (same fused multiply-adds or none),
// only sixteen lanes at a time, so results do not depend on which twin ran. Where the sibling leaves multiply-adds
// to GCC's contraction, the AVX-512 build may contract differently (the depthwise Conv loop did, so it has no twin):
// every twin needs a case in tests/engine/test_cpu_avx512_twins.cpp, which compares both paths bit for bit.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define KILN_HAVE_AVX512_TWINS 1
// avx512f implies AVX2 and FMA in GCC: a twin's FMA contraction matches its KILN_AVX2_TARGET ("avx2,fma") sibling.
#define KILN_AVX512_TARGET __attribute__((target("avx512f")))
#else
#define KILN_HAVE_AVX512_TWINS 0
#define KILN_AVX512_TARGET
#endif

namespace kiln::cpu {

// True when the AVX-512 twins run: the CPU has AVX-512F, KILN_CPU_DISABLE_AVX512 is unset or 0 in the environment
// (read once) and no test turned them off.
bool cpuHasAvx512();

// True when `value` (KILN_CPU_DISABLE_AVX512's value, null when unset) turns the twins off: any non-empty value but
// "0".
bool disablesAvx512(const char* value);

// Test hook: false makes cpuHasAvx512() false until called with true (the twins' parity tests run both paths).
// Does not turn them on where the CPU or the environment rules them out.
void setAvx512TwinsEnabled(bool enabled);

}  // namespace kiln::cpu
