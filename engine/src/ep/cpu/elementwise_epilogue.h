// Elementwise chains fused into the kernel that produces their input (Conv today): Conv -> Mul(scale) ->
// Add(shift) -> HardSwish written as Add/Clip/Mul/Div -> ... runs on each block of the convolution's output
// while it is still in cache, instead of one pass over memory per node. The CPU EP plans chains when it builds an
// executor; the fused nodes keep their own kernels, which run as before whenever the producer cannot apply the
// chain (another element type, an input of an unexpected shape). Results are bit-identical to the unfused nodes:
// each op is the same float operation in the same order.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

class ElementwiseEpilogue {
 public:
  struct Op {
    enum class Kind { kSave, kBinary, kRelu, kClip, kSigmoid, kHardSigmoid, kLeakyRelu, kHardSwish };
    enum class Operand { kConstant, kRegister, kInput };
    Kind kind = Kind::kRelu;
    char binary = '+';           // kBinary: + - * /
    bool operandFirst = false;   // kBinary: operand (op) value instead of value (op) operand
    Operand operand = Operand::kConstant;
    int index = 0;               // register (kSave, kRegister operands) or runtime input (kInput)
    std::vector<float> values;   // kConstant: one value, or one per channel
    float a = 0, b = 0;          // Clip lo/hi, HardSigmoid alpha/beta, LeakyRelu alpha
  };

  std::vector<Op> ops;
  int channels = 0;     // channel count (dim 1) of the output the chain applies to
  int registers = 0;
  size_t inputCount = 0;  // runtime inputs (same shape as the output), bound per run

  // out[offset, offset + count) = chain(out[...]); every element of the range lies in `channel`; `inputs` are
  // the runtime inputs' data, read at the same offsets.
  void apply(float* out, int64_t offset, int64_t count, int64_t channel, std::span<const float* const> inputs) const;
};

// A chain planned for a graph: node `anchor` computes its output 0 and then the chain, whose result is the
// output of the last follower; `inputs` name the runtime inputs in ElementwiseEpilogue order.
struct PlannedEpilogue {
  size_t anchor = 0;
  std::vector<size_t> followers;  // node indices, in order
  std::string output;
  std::vector<std::string> inputs;
  std::shared_ptr<const ElementwiseEpilogue> epilogue;
};

// The chains of `graph` worth fusing: anchors are float Convs with a constant weight; followers are Add, Sub, Mul,
// Div (other operand a constant scalar or per-channel tensor, an earlier value of the chain, or a value computed
// before the anchor), Relu, Clip, Sigmoid, HardSigmoid, LeakyRelu and HardSwish. Values inside a chain are read by
// nothing outside it. `overridable` names initializers a caller may feed (not constants).
std::vector<PlannedEpilogue> planEpilogues(const ir::Graph& graph, const std::unordered_set<std::string>& overridable,
                                           int64_t opset);

// An epilogue with one run's inputs: what a producing kernel sees through KernelContext::epilogue().
class EpilogueBinding {
 public:
  static constexpr size_t kMaxInputs = 2;
  // `inputs` (at most kMaxInputs, in ElementwiseEpilogue order) must outlive the binding.
  EpilogueBinding(const ElementwiseEpilogue& epilogue, std::span<const Tensor* const> inputs)
      : epilogue_(epilogue), inputs_(inputs) {}

  // True when the chain can run on an output of `type` and `shape` (float, the planned channels, and runtime
  // inputs of the same shape); the kernel then calls apply() on all of its output and markApplied().
  bool accepts(DataType type, const Shape& shape);
  void apply(float* out, int64_t offset, int64_t count, int64_t channel) const {
    epilogue_.apply(out, offset, count, channel, std::span<const float* const>(inputData_.data(), inputs_.size()));
  }
  void markApplied() { applied_ = true; }
  bool applied() const { return applied_; }

 private:
  const ElementwiseEpilogue& epilogue_;
  std::span<const Tensor* const> inputs_;
  std::array<const float*, kMaxInputs> inputData_{};
  bool applied_ = false;
};

}  // namespace kiln::cpu
