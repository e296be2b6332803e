// Einsum (opset 12): any equation numpy accepts, for every numeric type.
//  - Parsing: spaces are ignored; a term is letters (a-z, A-Z) with at most one "...". Without "->" the
//    output is the ellipsis dims followed by the letters used exactly once, in ASCII order ('ii' is a trace).
//  - Labels: each letter is one label, and the ellipsis stands for up to E labels shared by all terms,
//    right-aligned and broadcast numpy-style (a size-1 dim repeats). Letter dims must agree exactly.
//  - A letter repeated within a term takes the diagonal: the operand's stride for that label is the sum of
//    the dims' strides. Labels absent from the output are summed. As in numpy, an explicit output must keep
//    the ellipsis when it stands for any dims.
//  - Evaluation: operands are contracted left to right. Each pairwise step sums away labels only one side
//    needs, packs both sides as [batch, M, K] and [batch, K, N] and runs one GEMM per batch (gemm_helpers.h);
//    the last operand is then reduced/permuted into the output. Half types compute in float, integers in
//    their own type (wrapping, like the reference implementation).
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ep/cpu/kernels/gemm_helpers.h"

namespace kiln::cpu {
namespace {

constexpr int kLetters = 52;
constexpr int kEllipsis = -1;  // marks the ellipsis in a parsed term

// A parsed term: letter indices (a-z = 0..25, A-Z = 26..51) with kEllipsis where "..." stands.
using Term = std::vector<int>;

struct Equation {
  std::vector<Term> inputs;
  bool explicitOutput = false;
  Term output;
};

int letterIndex(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

Result<Term> parseTerm(const std::string& text, const std::string& equation) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      if (std::find(term.begin(), term.end(), kEllipsis) != term.end()) {
        return nodeError("Einsum", "equation '" + equation + "' has two ellipses in term '" + text + "'");
      }
      term.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int letter = letterIndex(text[i]);
    if (letter < 0) {
      return nodeError("Einsum", "equation '" + equation + "' has invalid character '" + text.substr(i, 1) +
                                     "' (terms are letters and at most one '...')");
    }
    term.push_back(letter);
  }
  return term;
}

Result<Equation> parseEquation(const std::string& raw) {
  std::string text;
  for (char c : raw) {
    if (c != ' ' && c != '\t') text.push_back(c);
  }
  Equation eq;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  if (arrow != std::string::npos) {
    eq.explicitOutput = true;
    KILN_ASSIGN_OR_RETURN(eq.output, parseTerm(text.substr(arrow + 2), raw));
    for (size_t i = 0; i < eq.output.size(); ++i) {
      if (std::find(eq.output.begin() + static_cast<ptrdiff_t>(i) + 1, eq.output.end(), eq.output[i]) !=
          eq.output.end()) {
        return nodeError("Einsum", "equation '" + raw + "' repeats a label in its output");
      }
    }
  }
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    KILN_ASSIGN_OR_RETURN(Term term, parseTerm(lhs.substr(start, comma - start), raw));
    eq.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return eq;
}

// An operand during evaluation: elements addressed through one stride per (distinct) label; stride 0 repeats
// the element along a broadcast label.
template <class C>
struct Operand {
  const C* data = nullptr;
  std::vector<C> owned;
  std::vector<int> labels;
  std::vector<int64_t> strides;

  int64_t strideOf(int label) const {
    const auto it = std::find(labels.begin(), labels.end(), label);
    return it == labels.end() ? 0 : strides[static_cast<size_t>(it - labels.begin())];
  }
  bool has(int label) const { return std::find(labels.begin(), labels.end(), label) != labels.end(); }
};

// Calls fn(offset) for every index over `sizes` in row-major order; offset = sum of index[d] * strides[d].
template <class F>
void forEachOffset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, F&& fn) {
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (sizes.empty()) return fn(int64_t{0});
  const size_t last = sizes.size() - 1;
  std::vector<int64_t> index(sizes.size(), 0);
  int64_t base = 0;
  while (true) {
    for (int64_t i = 0, off = base; i < sizes[last]; ++i, off += strides[last]) fn(off);
    size_t d = last;
    while (true) {
      if (d == 0) return;
      --d;
      base += strides[d];
      if (++index[d] < sizes[d]) break;
      base -= strides[d] * sizes[d];
      index[d] = 0;
    }
  }
}

// Writes dst[i] = sum over `summed` labels of op at the i-th index of `kept` labels (row-major).
template <class C>
void gatherSum(const Operand<C>& op, const std::vector<int>& kept, const std::vector<int>& summed,
               const std::vector<int64_t>& sizes, C* dst) {
  std::vector<int64_t> keptSizes, keptStrides, sumSizes, sumStrides;
  for (int l : kept) {
    keptSizes.push_back(sizes[static_cast<size_t>(l)]);
    keptStrides.push_back(op.strideOf(l));
  }
  for (int l : summed) {
    sumSizes.push_back(sizes[static_cast<size_t>(l)]);
    sumStrides.push_back(op.strideOf(l));
  }
  int64_t i = 0;
  forEachOffset(keptSizes, keptStrides, [&](int64_t offset) {
    C total = C(0);
    forEachOffset(sumSizes, sumStrides, [&](int64_t inner) { total += op.data[offset + inner]; });
    dst[i++] = total;
  });
}

int64_t productOf(const std::vector<int>& labels, const std::vector<int64_t>& sizes) {
  int64_t p = 1;
  for (int l : labels) p *= sizes[static_cast<size_t>(l)];
  return p;
}

// Contracts a and b into an operand over [batch..., M..., N...] holding the labels in `keep`.
template <class C>
Operand<C> contract(const Operand<C>& a, const Operand<C>& b, const std::vector<bool>& keep,
                    const std::vector<int64_t>& sizes) {
  std::vector<int> batch, m, n, k, aSum, bSum;
  for (int l : a.labels) {
    const bool inB = b.has(l), kept = keep[static_cast<size_t>(l)];
    (inB ? (kept ? batch : k) : (kept ? m : aSum)).push_back(l);
  }
  for (int l : b.labels) {
    if (!a.has(l)) (keep[static_cast<size_t>(l)] ? n : bSum).push_back(l);
  }
  const int64_t B = productOf(batch, sizes), M = productOf(m, sizes), N = productOf(n, sizes),
                K = productOf(k, sizes);
  auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  std::vector<C> packedA(static_cast<size_t>(B * M * K)), packedB(static_cast<size_t>(B * K * N));
  gatherSum(a, concat(batch, m, k), aSum, sizes, packedA.data());
  gatherSum(b, concat(batch, k, n), bSum, sizes, packedB.data());
  Operand<C> out;
  out.owned.assign(static_cast<size_t>(B * M * N), C(0));
  out.labels = concat(batch, m, n);
  out.strides.assign(out.labels.size(), 1);
  for (size_t d = out.labels.size(); d-- > 1;) {
    out.strides[d - 1] = out.strides[d] * sizes[static_cast<size_t>(out.labels[d])];
  }
  // Tiny products (elementwise-like equations) lose more to BLAS call overhead than they gain.
  const bool direct = M * N * K <= 64;
  for (int64_t i = 0; i < B; ++i) {
    const C* pa = packedA.data() + i * M * K;
    const C* pb = packedB.data() + i * K * N;
    C* pc = out.owned.data() + i * M * N;
    if (!direct) {
      gemm<C>(false, false, M, N, K, C(1), pa, K, pb, N, C(0), pc, N);
      continue;
    }
    for (int64_t r = 0; r < M; ++r) {
      for (int64_t kk = 0; kk < K; ++kk) {
        for (int64_t c = 0; c < N; ++c) pc[r * N + c] += pa[r * K + kk] * pb[kk * N + c];
      }
    }
  }
  out.data = out.owned.data();
  return out;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(Equation eq) : eq_(std::move(eq)) {}

  Status compute(KernelContext& ctx) override {
    const size_t count = eq_.inputs.size();
    if (ctx.inputCount() != count) {
      return nodeError("Einsum", "the equation has " + std::to_string(count) +
                                     " input terms but the node has " + std::to_string(ctx.inputCount()) +
                                     " inputs");
    }
    for (size_t i = 0; i < count; ++i) {
      if (!ctx.input(i)) return nodeError("Einsum", "input " + std::to_string(i) + " is missing");
      if (ctx.input(i)->dtype() != ctx.input(0)->dtype()) {
        return nodeError("Einsum", "all inputs must have the same element type");
      }
    }
    KILN_RETURN_IF_ERROR(resolve(ctx));
    Shape outShape;
    for (int l : outLabels_) outShape.push_back(sizes_[static_cast<size_t>(l)]);
    Tensor& y = ctx.allocateOutput(0, ctx.input(0)->dtype(), outShape);
    Status status = dispatchType<KILN_NUMERIC_TYPES>(y.dtype(), [&]<class T>() {
      evaluate<T>(ctx, y);
      return Status::ok();
    });
    return status.isOk() ? status : nodeError("Einsum", status.message());
  }

 private:
  // Maps every input dim to a label, checks sizes, and fixes the output labels. Labels 0..E-1 are the
  // ellipsis dims (E = the most any input has), E + letter the letters.
  Status resolve(const KernelContext& ctx) {
    const size_t count = eq_.inputs.size();
    int64_t ellipsisRank = 0;
    std::vector<int64_t> ellipsisOf(count, 0);
    for (size_t i = 0; i < count; ++i) {
      const Term& term = eq_.inputs[i];
      const int64_t rank = static_cast<int64_t>(ctx.input(i)->rank());
      const bool hasEllipsis = std::find(term.begin(), term.end(), kEllipsis) != term.end();
      const int64_t letters = static_cast<int64_t>(term.size()) - (hasEllipsis ? 1 : 0);
      if (hasEllipsis ? rank < letters : rank != letters) {
        return nodeError("Einsum", "input " + std::to_string(i) + " has rank " + std::to_string(rank) +
                                       " but its term has " + std::to_string(letters) + " letters" +
                                       (hasEllipsis ? " and an ellipsis" : ""));
      }
      ellipsisOf[i] = rank - letters;
      ellipsisRank = std::max(ellipsisRank, ellipsisOf[i]);
    }
    const int e = static_cast<int>(ellipsisRank);
    sizes_.assign(static_cast<size_t>(e + kLetters), -1);
    inputLabels_.assign(count, {});
    std::vector<int> uses(static_cast<size_t>(e + kLetters), 0);
    for (size_t i = 0; i < count; ++i) {
      const Shape& shape = ctx.input(i)->shape();
      std::vector<int>& labels = inputLabels_[i];
      for (int symbol : eq_.inputs[i]) {
        if (symbol != kEllipsis) {
          labels.push_back(e + symbol);
          ++uses[static_cast<size_t>(e + symbol)];
          continue;
        }
        for (int64_t j = 0; j < ellipsisOf[i]; ++j)
          labels.push_back(static_cast<int>(ellipsisRank - ellipsisOf[i] + j));
      }
      for (size_t d = 0; d < labels.size(); ++d) {
        int64_t& size = sizes_[static_cast<size_t>(labels[d])];
        const bool broadcastable = labels[d] < e;
        if (size < 0 || (broadcastable && size == 1)) {
          size = shape[d];
        } else if (shape[d] != size && !(broadcastable && shape[d] == 1)) {
          return nodeError("Einsum", "input " + std::to_string(i) + " dim " + std::to_string(d) +
                                         " has size " + std::to_string(shape[d]) +
                                         " but its label has size " + std::to_string(size));
        }
      }
    }
    outLabels_.clear();
    if (eq_.explicitOutput) {
      if (e > 0 && std::find(eq_.output.begin(), eq_.output.end(), kEllipsis) == eq_.output.end()) {
        return nodeError("Einsum", "the inputs' ellipses stand for " + std::to_string(e) +
                                       " dims but the output has no '...' to hold them");
      }
      for (int symbol : eq_.output) {
        if (symbol == kEllipsis) {
          for (int l = 0; l < e; ++l) outLabels_.push_back(l);
        } else if (sizes_[static_cast<size_t>(e + symbol)] < 0) {
          const char name = symbol < 26 ? char('a' + symbol) : char('A' + (symbol - 26));
          return nodeError("Einsum", std::string("output label '") + name + "' does not appear in any input");
        } else {
          outLabels_.push_back(e + symbol);
        }
      }
    } else {
      for (int l = 0; l < e; ++l) outLabels_.push_back(l);
      // Letters used exactly once, in ASCII order ('A'..'Z' before 'a'..'z').
      for (int symbol = 0; symbol < kLetters; ++symbol) {
        const int letter = (symbol + 26) % kLetters;
        if (uses[static_cast<size_t>(e + letter)] == 1) outLabels_.push_back(e + letter);
      }
    }
    return Status::ok();
  }

  // The operand view of input i: one stride per distinct label (summed for repeated letters, 0 when
  // broadcast).
  template <class C>
  Operand<C> operandOf(const Tensor& input, size_t i) const {
    Operand<C> op;
    const Shape& shape = input.shape();
    const std::vector<int64_t> strides = stridesOf(shape);
    for (size_t d = 0; d < shape.size(); ++d) {
      const int label = inputLabels_[i][d];
      const int64_t stride = shape[d] == 1 && sizes_[static_cast<size_t>(label)] != 1 ? 0 : strides[d];
      const auto it = std::find(op.labels.begin(), op.labels.end(), label);
      if (it == op.labels.end()) {
        op.labels.push_back(label);
        op.strides.push_back(stride);
      } else {
        op.strides[static_cast<size_t>(it - op.labels.begin())] += stride;
      }
    }
    return op;
  }

  template <class T>
  void evaluate(const KernelContext& ctx, Tensor& y) const {
    using C = ComputeType<T>;
    const size_t count = eq_.inputs.size();
    std::vector<Operand<C>> ops(count);
    for (size_t i = 0; i < count; ++i) {
      const Tensor& input = *ctx.input(i);
      ops[i] = operandOf<C>(input, i);
      if constexpr (std::is_same_v<C, T>) {
        ops[i].data = input.data<T>();
      } else {
        ops[i].owned.assign(input.data<T>(), input.data<T>() + input.numel());
        ops[i].data = ops[i].owned.data();
      }
    }
    Operand<C> current = std::move(ops[0]);
    if (current.owned.data() != nullptr) current.data = current.owned.data();
    for (size_t k = 1; k < count; ++k) {
      // Keep the labels that the output or a later operand still needs.
      std::vector<bool> keep(sizes_.size(), false);
      for (int l : outLabels_) keep[static_cast<size_t>(l)] = true;
      for (size_t j = k + 1; j < count; ++j) {
        for (int l : ops[j].labels) keep[static_cast<size_t>(l)] = true;
      }
      current = contract(current, ops[k], keep, sizes_);
    }
    std::vector<int> summed;
    for (int l : current.labels) {
      if (std::find(outLabels_.begin(), outLabels_.end(), l) == outLabels_.end()) summed.push_back(l);
    }
    if constexpr (std::is_same_v<C, T>) {
      gatherSum(current, outLabels_, summed, sizes_, y.data<T>());
    } else {
      std::vector<C> result(static_cast<size_t>(y.numel()));
      gatherSum(current, outLabels_, summed, sizes_, result.data());
      for (size_t i = 0; i < result.size(); ++i) y.data<T>()[i] = T(result[i]);
    }
  }

  Equation eq_;
  // Per compute: label sizes, each input's label per dim, the output's labels.
  std::vector<int64_t> sizes_;
  std::vector<std::vector<int>> inputLabels_;
  std::vector<int> outLabels_;
};

}  // namespace

void registerEinsumKernels(KernelRegistry& registry) {
  registry.add("Einsum", 12, kAnyOpset, [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    if (!info.node.hasAttribute("equation")) return nodeError("Einsum", "attribute 'equation' is required");
    KILN_ASSIGN_OR_RETURN(Equation eq, parseEquation(info.node.attrString("equation", "")));
    return std::unique_ptr<Kernel>(new EinsumKernel(std::move(eq)));
  });
}

}  // namespace kiln::cpu
