// Private: 8-bit convolution and matmul on oneDNN (u8/s8 activations x s8 weights, int32 accumulation). The constant
// weights are converted to s8 with their compensation factors when the kernel is created, and laid out in the
// primitive's blocked format once per input shape: at kernel creation when shape inference fixed the input's shape
// (prepare()), else when the first input of a shape arrives (the primitive needs the input's shape; a representative
// shape at creation would cost a second JIT compile per layer). Results are bit-identical to the
// reference int32 loops (convolveInt32, runMatMul<int32_t>):
//  - oneDNN has no u8 weights, so weights are stored as w_s8 = w - c (c = 128 for uint8, 0 for int8) and the
//    weight zero point moves into a compensation term: (w - zw) = w_s8 + (c - zw). For a convolution,
//    sum (x - zx)(w - zw) = sum (x - zx) w_s8 + (c - zw[m]) * S, where S = sum (x - zx) over the window's valid taps
//    and the group's channels, computed here exactly (a channel sum, then a window sum: work on the order of the
//    input's size). For a matmul, S is the row sum of (a - za).
//  - The activation zero point is a oneDNN runtime zero point (padding then counts as x = zx, i.e. zero).
//  - Only CPUs whose effective oneDNN ISA has VNNI (vpdpbusd accumulates u8*s8 into int32 without the int16
//    saturation of vpmaddubsw) take this path; elsewhere, or under ONEDNN_MAX_CPU_ISA below VNNI, the kernels keep
//    the reference loops. An environment variable can make Kiln slower, never wrong.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/matmul_helpers.h"
#include "ep/cpu/thread_pool.h"
#include "kiln/tensor.h"
#include "ops/window_geometry.h"

namespace kiln::cpu {

// True when oneDNN's effective ISA on this CPU accumulates 8-bit products exactly (VNNI).
bool oneDnnInt8Exact();

// The effective oneDNN ISA as oneDNN names it (e.g. "avx512_core_vnni"), for benchmarks and logs.
std::string oneDnnIsaName();

// A convolution with constant 8-bit weights, packed for oneDNN.
class OneDnnInt8Conv {
 public:
  // Packs w (uint8/int8 [M, C/group, kernel...], 1 to 3 spatial dims) and its zero point (null, one value or M
  // values, w's type). nullptr when oneDNN cannot compute it exactly here (no VNNI, unsupported types or ranks).
  static std::unique_ptr<OneDnnInt8Conv> create(const ops::WindowAttributes& attrs, int64_t group, const Tensor& w,
                                                const Tensor* wZero);
  ~OneDnnInt8Conv();

  // Creates the primitive for inputs x of `xType` and `xShape` and packs the weights for it now (at kernel
  // creation, when shape inference fixed x's shape), so the first run of that shape finds its plan ready. Does
  // nothing for a shape or type this convolution cannot take: run() then decides as before.
  // `pool`: the kernel's threads (oneDNN fixes a primitive's thread count when creating it).
  void prepare(DataType xType, const Shape& xShape, ThreadPool* pool);
  // Plans (primitive + packed weights) made so far, one per input type and shape, for tests.
  size_t planCount() const;

  // y [s.outShape] = conv(x - xZero, w - wZero) + bias (bias: M values or null), for shapes `s` resolved from x and
  // this w. False (y untouched) when this x is outside what the packed primitive handles (element type, zero point
  // layout, a oneDNN reference implementation): the caller then runs the reference loops.
  bool run(const Tensor& x, const Tensor* xZero, const int32_t* bias, const ConvShapes& s, int32_t* y,
           ThreadPool* pool);

  // oneDNN's implementation name of the last primitive created (e.g. "jit_int8:avx512_core_vnni"), for tests.
  std::string implementation() const;

 private:
  struct State;
  explicit OneDnnInt8Conv(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// A matmul A [..., M, K] x B [K, N] with constant 8-bit B, packed for oneDNN.
class OneDnnInt8MatMul {
 public:
  // Packs b (uint8/int8, 2-D [K, N]) and its zero point (null, one value or N values, b's type); nullptr when
  // oneDNN cannot compute it exactly here.
  static std::unique_ptr<OneDnnInt8MatMul> create(const Tensor& b, const Tensor* bZero);
  ~OneDnnInt8MatMul();

  // prepare() of OneDnnInt8Conv for a matmul: the plan for a of `aType` and `aShape` ([..., M, K]), made now.
  void prepare(DataType aType, const Shape& aShape, ThreadPool* pool);
  size_t planCount() const;

  // y [plan.outShape] = (a - aZero) x (b - bZero) for a plan of a with this b; aZero must be per tensor. False
  // (y untouched) when this a is outside what the packed primitive handles.
  bool run(const Tensor& a, const Tensor* aZero, const MatMulPlan& plan, int32_t* y, ThreadPool* pool);

  // oneDNN's implementation name of the last primitive created, for tests.
  std::string implementation() const;

 private:
  struct State;
  explicit OneDnnInt8MatMul(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kiln::cpu
