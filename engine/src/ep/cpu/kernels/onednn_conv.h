// Private: float convolution on oneDNN, which dispatches on the CPU's real ISA (AVX-512 where the CPU has it) whatever
// OpenBLAS was told by OPENBLAS_CORETYPE. Opt-in (session config kiln.cpu.float_kernels=onednn): measured on PP-OCRv4
// det and the float16 IS-Net it did not beat conv.cpp's im2col + GEMM path (oneDNN's sgemm too), which stays the
// default and the reference. The constant weights are
// laid out in the primitive's format once, when the first input of a shape arrives (the primitive needs the input's
// shape); activations stay in Kiln's plain NCHW layout (oneDNN's blocked layouts with a reorder on each side measured no
// better, the reorders eating what the direct convolution gained: on the float16 IS-Net 1.09 s of brgconv plus 0.57 s
// of NCHW<->NHWC reorders against 2.08 s of im2col + sgemm; keeping NHWC across conv chains would need layout-aware
// pooling, Resize, Concat and Add, as onnxruntime's NCHWc transformer has).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/thread_pool.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// A convolution with constant float weights, packed for oneDNN.
class OneDnnFloatConv {
 public:
  // Takes w (float [M, C/group, kernel...], 1 to 3 spatial dims; its storage is shared, not copied). nullptr when
  // oneDNN has no CPU engine here or w is outside what this kernel handles.
  static std::unique_ptr<OneDnnFloatConv> create(int64_t group, const Tensor& w);
  ~OneDnnFloatConv();

  // y [s.outShape] = conv(x, w) + bias (bias: M values or null) for float x [N, C, in...] and shapes `s` resolved from
  // x and this w. False (y untouched) when the shape is outside what a fast oneDNN primitive handles: the caller then
  // runs the reference path.
  bool run(const float* x, const float* bias, const ConvShapes& s, float* y, ThreadPool* pool);

  // oneDNN's implementation name of the last primitive created (e.g. "gemm:jit"), for tests and benchmarks.
  std::string implementation() const;

 private:
  struct State;
  explicit OneDnnFloatConv(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kiln::cpu
