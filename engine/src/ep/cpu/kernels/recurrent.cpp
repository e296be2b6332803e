// Recurrent kernels: RNN, GRU and LSTM (forward, reverse, bidirectional; sequence_lens; layout 0/1).
// Each direction projects every time step's input with one GEMM up front, then steps through time with one
// GEMM per step for the recurrent term. float and double run natively; float16 runs in float.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"

namespace kiln::cpu {

namespace {

enum class CellKind { RNN, GRU, LSTM };
enum class ActivationKind { RELU, TANH, SIGMOID, AFFINE, LEAKY_RELU, THRESHOLDED_RELU, SCALED_TANH, HARD_SIGMOID, ELU,
                            SOFTSIGN, SOFTPLUS };

struct Activation {
  ActivationKind kind = ActivationKind::TANH;
  float alpha = 0;
  float beta = 0;

  // Applies the function in place to n values (the switch sits outside the element loop).
  template <class T>
  void apply(T* x, int64_t n) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (kind) {
      case ActivationKind::RELU: for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], T(0)); break;
      case ActivationKind::TANH: for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]); break;
      case ActivationKind::SIGMOID: for (int64_t i = 0; i < n; ++i) x[i] = T(1) / (T(1) + std::exp(-x[i])); break;
      case ActivationKind::AFFINE: for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b; break;
      case ActivationKind::LEAKY_RELU: for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * x[i]; break;
      case ActivationKind::THRESHOLDED_RELU: for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : T(0); break;
      case ActivationKind::SCALED_TANH: for (int64_t i = 0; i < n; ++i) x[i] = a * std::tanh(b * x[i]); break;
      case ActivationKind::HARD_SIGMOID:
        for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(a * x[i] + b, T(0), T(1));
        break;
      case ActivationKind::ELU:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * (std::exp(x[i]) - T(1));
        break;
      case ActivationKind::SOFTSIGN: for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (T(1) + std::abs(x[i])); break;
      case ActivationKind::SOFTPLUS: for (int64_t i = 0; i < n; ++i) x[i] = std::log1p(std::exp(x[i])); break;
    }
  }
};

// Parses `activations` with their alpha/beta: each function that takes alpha (beta) consumes the next value of
// activation_alpha (activation_beta), falling back to the function's ONNX default.
Result<std::vector<Activation>> parseActivations(const ir::Node& node, const std::vector<std::string>& defaults,
                                                 int64_t directions) {
  std::vector<std::string> names = node.attrStrings("activations");
  const size_t perDirection = defaults.size();
  if (names.empty()) {
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == perDirection && directions == 2) {
    names.insert(names.end(), names.begin(), names.end());
  }
  if (names.size() != perDirection * static_cast<size_t>(directions)) {
    return invalidArgument(node.label() + ": expected " + std::to_string(perDirection * directions) +
                           " activations, got " + std::to_string(names.size()));
  }
  const std::vector<float> alphas = node.attrFloats("activation_alpha"), betas = node.attrFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> result;
  for (const std::string& original : names) {
    std::string name = original;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    struct Known { const char* name; ActivationKind kind; bool hasAlpha, hasBeta; float alpha, beta; };
    static const Known kKnown[] = {
        {"relu", ActivationKind::RELU, false, false, 0, 0},
        {"tanh", ActivationKind::TANH, false, false, 0, 0},
        {"sigmoid", ActivationKind::SIGMOID, false, false, 0, 0},
        {"affine", ActivationKind::AFFINE, true, true, 1.0f, 0.0f},
        {"leakyrelu", ActivationKind::LEAKY_RELU, true, false, 0.01f, 0},
        {"thresholdedrelu", ActivationKind::THRESHOLDED_RELU, true, false, 1.0f, 0},
        {"scaledtanh", ActivationKind::SCALED_TANH, true, true, 1.0f, 1.0f},
        {"hardsigmoid", ActivationKind::HARD_SIGMOID, true, true, 0.2f, 0.5f},
        {"elu", ActivationKind::ELU, true, false, 1.0f, 0},
        {"softsign", ActivationKind::SOFTSIGN, false, false, 0, 0},
        {"softplus", ActivationKind::SOFTPLUS, false, false, 0, 0},
    };
    const Known* known = nullptr;
    for (const Known& k : kKnown) {
      if (name == k.name) known = &k;
    }
    if (!known) return invalidArgument(node.label() + ": unsupported activation '" + original + "'");
    Activation activation{known->kind, known->alpha, known->beta};
    if (known->hasAlpha && nextAlpha < alphas.size()) activation.alpha = alphas[nextAlpha++];
    if (known->hasBeta && nextBeta < betas.size()) activation.beta = betas[nextBeta++];
    result.push_back(activation);
  }
  return result;
}

// Converts a float16/bfloat16 tensor to float (and back) so half-precision models run on the float path.
Tensor toFloat(const Tensor& t) {
  Tensor out(DataType::FLOAT, t.shape());
  float* dst = out.data<float>();
  if (t.dtype() == DataType::FLOAT16) {
    for (int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<float>(t.data<Float16>()[i]);
  } else {
    for (int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<float>(t.data<BFloat16>()[i]);
  }
  return out;
}
Tensor fromFloat(const Tensor& t, DataType type) {
  Tensor out(type, t.shape());
  const float* src = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (type == DataType::FLOAT16) {
      out.data<Float16>()[i] = Float16(src[i]);
    } else {
      out.data<BFloat16>()[i] = BFloat16(src[i]);
    }
  }
  return out;
}

template <class T>
void clipValues(T* x, int64_t n, T clip) {
  if (clip > 0) {
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
  }
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const KernelInfo& info, CellKind kind) : label_(info.node.label()), kind_(kind) {
    const ir::Node& node = info.node;
    hidden_ = node.attrInt("hidden_size", 0);
    clip_ = node.hasAttribute("clip") ? node.attrFloat("clip", 0.0f) : 0.0f;
    direction_ = node.attrString("direction", "forward");
    layout_ = node.attrInt("layout", 0);
    inputForget_ = node.attrInt("input_forget", 0) != 0;
    linearBeforeReset_ = node.attrInt("linear_before_reset", 0) != 0;
    gates_ = kind == CellKind::LSTM ? 4 : kind == CellKind::GRU ? 3 : 1;
  }

  Status init(const KernelInfo& info) {
    if (direction_ != "forward" && direction_ != "reverse" && direction_ != "bidirectional") {
      return invalidArgument(label_ + ": unknown direction '" + direction_ + "'");
    }
    if (layout_ != 0 && layout_ != 1) return invalidArgument(label_ + ": layout must be 0 or 1");
    if (clip_ < 0) return invalidArgument(label_ + ": clip must be positive");
    directions_ = direction_ == "bidirectional" ? 2 : 1;
    const std::vector<std::string> defaults =
        kind_ == CellKind::LSTM ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : kind_ == CellKind::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                 : std::vector<std::string>{"Tanh"};
    KILN_ASSIGN_OR_RETURN(activations_, parseActivations(info.node, defaults, directions_));
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    for (size_t i = 0; i < 3; ++i) {
      if (!ctx.hasInput(i)) return invalidArgument(label_ + ": X, W and R are required");
    }
    const DataType type = ctx.input(0)->dtype();
    if (type == DataType::FLOAT) return computeTyped<float>(ctx, type);
    if (type == DataType::DOUBLE) return computeTyped<double>(ctx, type);
    if (type == DataType::FLOAT16 || type == DataType::BFLOAT16) return computeTyped<float>(ctx, type);
    return notImplemented(label_ + ": unsupported element type " + dataTypeName(type));
  }

 private:
  // Input i as T (converted from half precision when the node's type is float16/bfloat16), or nullptr.
  const Tensor* typedInput(KernelContext& ctx, size_t i, DataType type, std::vector<Tensor>& storage) const {
    const Tensor* t = ctx.input(i);
    if (!t || t->dtype() == DataType::FLOAT || t->dtype() == DataType::DOUBLE) return t;
    storage[i] = toFloat(*t);
    return &storage[i];
  }

  template <class T>
  Status computeTyped(KernelContext& ctx, DataType type) {
    std::vector<Tensor> storage(8);
    const Tensor& X = *typedInput(ctx, 0, type, storage);
    const Tensor& W = *typedInput(ctx, 1, type, storage);
    const Tensor& R = *typedInput(ctx, 2, type, storage);
    const Tensor* B = typedInput(ctx, 3, type, storage);
    const Tensor* initH = typedInput(ctx, 5, type, storage);
    const Tensor* initC = kind_ == CellKind::LSTM ? typedInput(ctx, 6, type, storage) : nullptr;
    const Tensor* P = kind_ == CellKind::LSTM ? typedInput(ctx, 7, type, storage) : nullptr;
    const DataType computeType = DataTypeOf<T>::value;
    for (const Tensor* t : {&X, &W, &R, B, initH, initC, P}) {
      if (t && t->dtype() != computeType) return invalidArgument(label_ + ": inputs must share one element type");
    }
    if (X.rank() != 3 || W.rank() != 3 || R.rank() != 3) {
      return invalidArgument(label_ + ": X, W and R must have rank 3");
    }
    const int64_t D = directions_;
    const int64_t S = layout_ == 0 ? X.dim(0) : X.dim(1), N = layout_ == 0 ? X.dim(1) : X.dim(0), I = X.dim(2);
    const int64_t H = hidden_ > 0 ? hidden_ : R.dim(2), G = gates_;
    if (W.shape() != Shape{D, G * H, I}) {
      return invalidArgument(label_ + ": W has shape " + shapeToString(W.shape()) + ", expected " +
                             shapeToString({D, G * H, I}));
    }
    if (R.shape() != Shape{D, G * H, H}) {
      return invalidArgument(label_ + ": R has shape " + shapeToString(R.shape()) + ", expected " +
                             shapeToString({D, G * H, H}));
    }
    if (B && B->shape() != Shape{D, 2 * G * H}) return invalidArgument(label_ + ": B must have shape [D, 2*G*H]");
    const Shape stateShape = layout_ == 0 ? Shape{D, N, H} : Shape{N, D, H};
    if (initH && initH->shape() != stateShape) {
      return invalidArgument(label_ + ": initial_h must have shape " + shapeToString(stateShape));
    }
    if (initC && initC->shape() != stateShape) {
      return invalidArgument(label_ + ": initial_c must have shape " + shapeToString(stateShape));
    }
    if (P && P->shape() != Shape{D, 3 * H}) return invalidArgument(label_ + ": P must have shape [D, 3*H]");
    std::vector<int64_t> lengths(static_cast<size_t>(N), S);
    if (ctx.hasInput(4)) {
      KILN_ASSIGN_OR_RETURN(lengths, readInt64Values(*ctx.input(4)));
      if (static_cast<int64_t>(lengths.size()) != N) {
        return invalidArgument(label_ + ": sequence_lens must have batch_size entries");
      }
      for (int64_t l : lengths) {
        if (l < 0 || l > S) return invalidArgument(label_ + ": sequence_lens values must be in [0, seq_length]");
      }
    }

    const size_t outputs = ctx.outputCount();
    Tensor Y(computeType, layout_ == 0 ? Shape{S, D, N, H} : Shape{N, S, D, H});
    Tensor Yh(computeType, stateShape), Yc(computeType, stateShape);
    for (int64_t d = 0; d < D; ++d) {
      const bool reverse = direction_ == "reverse" || d == 1;
      runDirection<T>(d, reverse, X, W, R, B, initH, initC, P, lengths, S, N, I, H, Y, Yh, Yc);
    }
    Tensor* results[] = {&Y, &Yh, &Yc};
    for (size_t i = 0; i < outputs && i < (kind_ == CellKind::LSTM ? 3u : 2u); ++i) {
      ctx.setOutput(i, type == computeType ? *results[i] : fromFloat(*results[i], type));
    }
    return Status::ok();
  }

  template <class T>
  void runDirection(int64_t d, bool reverse, const Tensor& X, const Tensor& W, const Tensor& R, const Tensor* B,
                    const Tensor* initH, const Tensor* initC, const Tensor* P, const std::vector<int64_t>& lengths,
                    int64_t S, int64_t N, int64_t I, int64_t H, Tensor& Y, Tensor& Yh, Tensor& Yc) {
    const int64_t G = gates_, GH = G * H, D = directions_;
    const T* w = W.data<T>() + d * GH * I;
    const T* r = R.data<T>() + d * GH * H;
    const T* wb = B ? B->data<T>() + d * 2 * GH : nullptr;
    const T* rb = B ? wb + GH : nullptr;
    const T* peep = P ? P->data<T>() + d * 3 * H : nullptr;
    const Activation* act = &activations_[static_cast<size_t>(d) * (kind_ == CellKind::LSTM ? 3 : kind_ == CellKind::GRU ? 2 : 1)];
    const T clip = static_cast<T>(clip_);

    // Input projection of every step at once: xw[row] = X[row] * W^T + Wb (+ Rb, except GRU's h gate).
    std::vector<T> xw(static_cast<size_t>(S * N * GH));
    gemm<T>(false, true, S * N, GH, I, T(1), X.data<T>(), I, w, I, T(0), xw.data(), GH);
    std::vector<T> bias(static_cast<size_t>(GH), T(0));
    if (B) {
      for (int64_t j = 0; j < GH; ++j) {
        const bool gruCandidate = kind_ == CellKind::GRU && j >= 2 * H;
        bias[j] = wb[j] + (gruCandidate ? T(0) : rb[j]);
      }
      for (int64_t row = 0; row < S * N; ++row) {
        T* x = xw.data() + row * GH;
        for (int64_t j = 0; j < GH; ++j) x[j] += bias[j];
      }
    }
    auto xwRow = [&](int64_t t, int64_t b) { return xw.data() + (layout_ == 0 ? t * N + b : b * S + t) * GH; };
    auto stateOffset = [&](int64_t b) { return (layout_ == 0 ? d * N + b : b * D + d) * H; };
    auto yOffset = [&](int64_t t, int64_t b) { return (layout_ == 0 ? (t * D + d) * N + b : (b * S + t) * D + d) * H; };

    std::vector<T> h(static_cast<size_t>(N * H), T(0)), c(h.size(), T(0)), gates(static_cast<size_t>(N * GH));
    std::vector<T> scratch(h.size()), hNew(h.size()), cNew(h.size());
    for (int64_t b = 0; b < N; ++b) {
      if (initH) std::copy_n(initH->data<T>() + stateOffset(b), H, h.data() + b * H);
      if (initC) std::copy_n(initC->data<T>() + stateOffset(b), H, c.data() + b * H);
    }
    const int64_t steps = N == 0 ? 0 : *std::max_element(lengths.begin(), lengths.end());
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t b = 0; b < N; ++b) {
        T* g = gates.data() + b * GH;
        if (s < lengths[b]) {
          std::copy_n(xwRow(reverse ? lengths[b] - 1 - s : s, b), GH, g);
        } else {
          std::fill_n(g, GH, T(0));
        }
      }
      // Recurrent term for every gate except GRU's candidate, which needs the reset gate first.
      const int64_t recurrentCols = kind_ == CellKind::GRU ? 2 * H : GH;
      gemm<T>(false, true, N, recurrentCols, H, T(1), h.data(), H, r, H, T(1), gates.data(), GH);
      if (kind_ == CellKind::LSTM) {
        lstmStep(gates.data(), c.data(), peep, act, clip, N, H, hNew.data(), cNew.data());
      } else if (kind_ == CellKind::GRU) {
        gruStep(gates.data(), h.data(), r + 2 * H * H, B ? rb + 2 * H : nullptr, act, clip, N, H, scratch.data(),
                hNew.data());
      } else {
        for (int64_t b = 0; b < N; ++b) {
          T* g = gates.data() + b * H;
          clipValues(g, H, clip);
          act[0].apply(g, H);
          std::copy_n(g, H, hNew.data() + b * H);
        }
      }
      for (int64_t b = 0; b < N; ++b) {
        if (s >= lengths[b]) continue;
        std::copy_n(hNew.data() + b * H, H, h.data() + b * H);
        if (kind_ == CellKind::LSTM) std::copy_n(cNew.data() + b * H, H, c.data() + b * H);
        std::copy_n(hNew.data() + b * H, H, Y.data<T>() + yOffset(reverse ? lengths[b] - 1 - s : s, b));
      }
    }
    for (int64_t b = 0; b < N; ++b) {
      std::copy_n(h.data() + b * H, H, Yh.data<T>() + stateOffset(b));
      std::copy_n(c.data() + b * H, H, Yc.data<T>() + stateOffset(b));
    }
  }

  // LSTM gates in iofc order: C' = f*C + i*g(c~), H' = o*h(C'); peepholes P are in iof order.
  template <class T>
  void lstmStep(T* gates, const T* c, const T* peep, const Activation* act, T clip, int64_t N, int64_t H, T* hNew,
                T* cNew) const {
    for (int64_t b = 0; b < N; ++b) {
      T* gi = gates + b * 4 * H;
      T* go = gi + H;
      T* gf = gi + 2 * H;
      T* gc = gi + 3 * H;
      const T* cPrev = c + b * H;
      T* cOut = cNew + b * H;
      T* hOut = hNew + b * H;
      if (peep) {
        for (int64_t j = 0; j < H; ++j) gi[j] += peep[j] * cPrev[j];
        for (int64_t j = 0; j < H; ++j) gf[j] += peep[2 * H + j] * cPrev[j];
      }
      clipValues(gi, H, clip);
      act[0].apply(gi, H);
      if (inputForget_) {
        for (int64_t j = 0; j < H; ++j) gf[j] = T(1) - gi[j];
      } else {
        clipValues(gf, H, clip);
        act[0].apply(gf, H);
      }
      clipValues(gc, H, clip);
      act[1].apply(gc, H);
      for (int64_t j = 0; j < H; ++j) cOut[j] = gf[j] * cPrev[j] + gi[j] * gc[j];
      if (peep) {
        for (int64_t j = 0; j < H; ++j) go[j] += peep[H + j] * cOut[j];
      }
      clipValues(go, H, clip);
      act[0].apply(go, H);
      std::copy_n(cOut, H, hOut);
      act[2].apply(hOut, H);
      for (int64_t j = 0; j < H; ++j) hOut[j] *= go[j];
    }
  }

  // GRU gates in zrh order. The candidate uses (r*H)*Rh^T + Rbh, or r*(H*Rh^T + Rbh) with linear_before_reset.
  template <class T>
  void gruStep(T* gates, const T* h, const T* rh, const T* rbh, const Activation* act, T clip, int64_t N, int64_t H,
               T* scratch, T* hNew) const {
    const int64_t GH = 3 * H;
    for (int64_t b = 0; b < N; ++b) {
      T* zr = gates + b * GH;
      clipValues(zr, 2 * H, clip);
      act[0].apply(zr, 2 * H);
    }
    if (linearBeforeReset_) {
      gemm<T>(false, true, N, H, H, T(1), h, H, rh, H, T(0), scratch, H);
      for (int64_t b = 0; b < N; ++b) {
        const T* reset = gates + b * GH + H;
        T* candidate = gates + b * GH + 2 * H;
        const T* hr = scratch + b * H;
        for (int64_t j = 0; j < H; ++j) candidate[j] += reset[j] * (hr[j] + (rbh ? rbh[j] : T(0)));
      }
    } else {
      for (int64_t b = 0; b < N; ++b) {
        const T* reset = gates + b * GH + H;
        for (int64_t j = 0; j < H; ++j) scratch[b * H + j] = reset[j] * h[b * H + j];
      }
      gemm<T>(false, true, N, H, H, T(1), scratch, H, rh, H, T(1), gates + 2 * H, GH);
      if (rbh) {
        for (int64_t b = 0; b < N; ++b) {
          for (int64_t j = 0; j < H; ++j) gates[b * GH + 2 * H + j] += rbh[j];
        }
      }
    }
    for (int64_t b = 0; b < N; ++b) {
      const T* z = gates + b * GH;
      T* candidate = gates + b * GH + 2 * H;
      clipValues(candidate, H, clip);
      act[1].apply(candidate, H);
      const T* hPrev = h + b * H;
      T* hOut = hNew + b * H;
      for (int64_t j = 0; j < H; ++j) hOut[j] = (T(1) - z[j]) * candidate[j] + z[j] * hPrev[j];
    }
  }

  std::string label_;
  CellKind kind_;
  int64_t hidden_ = 0;
  float clip_ = 0;
  std::string direction_;
  int64_t layout_ = 0;
  bool inputForget_ = false;
  bool linearBeforeReset_ = false;
  int64_t gates_ = 1;
  int64_t directions_ = 1;
  std::vector<Activation> activations_;
};

template <CellKind kKind>
Result<std::unique_ptr<Kernel>> createRecurrent(const KernelInfo& info) {
  auto kernel = std::make_unique<RecurrentKernel>(info, kKind);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerRecurrentKernels(KernelRegistry& registry) {
  registry.add("RNN", 1, kAnyOpset, createRecurrent<CellKind::RNN>);
  registry.add("GRU", 1, kAnyOpset, createRecurrent<CellKind::GRU>);
  registry.add("LSTM", 1, kAnyOpset, createRecurrent<CellKind::LSTM>);
}

}  // namespace kiln::cpu
