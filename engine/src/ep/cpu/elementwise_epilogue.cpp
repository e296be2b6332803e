#include "ep/cpu/elementwise_epilogue.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_helpers.h"  // KILN_ALWAYS_INLINE
#include "ep/cpu/kernels/simd_float.h"

namespace kiln::cpu {
namespace {

using namespace elementwise;  // Float4 and the scalar/vector math vocabulary (simd_float.h)

constexpr int64_t kBlock = 256;  // elements per pass of the chain: stays in L1 with the saved registers
constexpr int kMaxRegisters = 4;
constexpr size_t kMaxInputs = EpilogueBinding::kMaxInputs;

// One op over a block, as plain loops that the compiler vectorizes (8 lanes in the AVX2 twin, 16 in the AVX-512
// one). The float operations are those of the standalone kernels (elementwise.cpp, activation.cpp), and this file
// is compiled with -ffp-contract=off (engine/CMakeLists.txt: the AVX-512 target brings FMA), so no multiply-add
// is contracted and results match the unfused nodes bit for bit whichever twin runs.
template <class F>
KILN_ALWAYS_INLINE inline void mapBlock(float* __restrict value, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) value[i] = f(value[i]);
}
template <class F>
KILN_ALWAYS_INLINE inline void zipBlock(float* __restrict value, const float* __restrict operand, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) value[i] = f(value[i], operand[i]);
}

// value (op) operand, or operand (op) value when `operandFirst`; operand is an array, or `scalar` when null.
KILN_ALWAYS_INLINE inline void binaryBlock(float* value, const float* operand, float scalar, int64_t n, char op,
                                           bool operandFirst) {
  auto run = [&](auto f) {
    if (operand) {
      zipBlock(value, operand, n, f);
    } else {
      mapBlock(value, n, [f, scalar](float x) { return f(x, scalar); });
    }
  };
  switch (op) {
    case '+': return run([](float x, float y) { return x + y; });
    case '*': return run([](float x, float y) { return x * y; });
    case '-': return operandFirst ? run([](float x, float y) { return y - x; }) : run([](float x, float y) { return x - y; });
    default: return operandFirst ? run([](float x, float y) { return y / x; }) : run([](float x, float y) { return x / y; });
  }
}

KILN_ALWAYS_INLINE inline void unaryBlock(float* value, int64_t n, const ElementwiseEpilogue::Op& op) {
  using Kind = ElementwiseEpilogue::Op::Kind;
  const float a = op.a, b = op.b;
  switch (op.kind) {
    case Kind::kRelu: return mapBlock(value, n, [](float x) { return vmax(x, 0.0f); });
    case Kind::kClip: return mapBlock(value, n, [a, b](float x) { return vmin(vmax(x, a), b); });
    case Kind::kSigmoid: return mapBlock(value, n, [](float x) { return 1.0f / (1.0f + fastExp(-x)); });
    case Kind::kHardSigmoid: return mapBlock(value, n, [a, b](float x) { return vmin(vmax(a * x + b, 0.0f), 1.0f); });
    case Kind::kLeakyRelu: return mapBlock(value, n, [a](float x) { return x < 0.0f ? a * x : x; });
    default:  // kHardSwish
      return mapBlock(value, n, [](float x) { return x * vmin(vmax(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f); });
  }
}

KILN_ALWAYS_INLINE inline void applyChain(const ElementwiseEpilogue& chain, float* out, int64_t offset, int64_t count,
                                          int64_t channel, std::span<const float* const> inputs) {
  using Kind = ElementwiseEpilogue::Op::Kind;
  using Operand = ElementwiseEpilogue::Op::Operand;
  alignas(64) float saved[kMaxRegisters][kBlock];
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    float* value = out + offset + start;
    for (const auto& op : chain.ops) {
      if (op.kind == Kind::kSave) {
        std::copy_n(value, n, saved[op.index]);
      } else if (op.kind != Kind::kBinary) {
        unaryBlock(value, n, op);
      } else if (op.operand == Operand::kConstant) {
        const float scalar = op.values.size() == 1 ? op.values[0] : op.values[static_cast<size_t>(channel)];
        binaryBlock(value, nullptr, scalar, n, op.binary, op.operandFirst);
      } else {
        const float* operand = op.operand == Operand::kRegister ? saved[op.index]
                                                                : inputs[static_cast<size_t>(op.index)] + offset + start;
        binaryBlock(value, operand, 0.0f, n, op.binary, op.operandFirst);
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void applyChainAvx2(const ElementwiseEpilogue& chain, float* out, int64_t offset,
                                                    int64_t count, int64_t channel,
                                                    std::span<const float* const> inputs) {
  applyChain(chain, out, offset, count, channel, inputs);
}
KILN_AVX512_TARGET void applyChainAvx512(const ElementwiseEpilogue& chain, float* out, int64_t offset, int64_t count,
                                         int64_t channel, std::span<const float* const> inputs) {
  applyChain(chain, out, offset, count, channel, inputs);
}
bool cpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif
void applyChainBaseline(const ElementwiseEpilogue& chain, float* out, int64_t offset, int64_t count, int64_t channel,
                        std::span<const float* const> inputs) {
  applyChain(chain, out, offset, count, channel, inputs);
}

}  // namespace

void ElementwiseEpilogue::apply(float* out, int64_t offset, int64_t count, int64_t channel,
                                std::span<const float* const> inputs) const {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpuHasAvx512()) return applyChainAvx512(*this, out, offset, count, channel, inputs);
  if (cpuHasAvx2()) return applyChainAvx2(*this, out, offset, count, channel, inputs);
#endif
  applyChainBaseline(*this, out, offset, count, channel, inputs);
}

bool EpilogueBinding::accepts(DataType type, const Shape& shape) {
  if (type != DataType::FLOAT || shape.size() < 2 || shape[1] != epilogue_.channels) return false;
  if (inputs_.size() > kMaxInputs) return false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Tensor* input = inputs_[i];
    if (!input || input->dtype() != DataType::FLOAT || input->shape() != shape) return false;
    inputData_[i] = input->data<float>();
  }
  return true;
}

namespace {

// What a follower's operand is, seen from the chain.
struct OperandPlan {
  ElementwiseEpilogue::Op::Operand kind;
  std::string name;             // register value or runtime input
  std::vector<float> constant;  // kConstant
};

// One follower node as an op of the chain.
struct FollowerStep {
  size_t node = 0;
  ElementwiseEpilogue::Op op;
  std::optional<OperandPlan> operand;
};

class ChainPlanner {
 public:
  ChainPlanner(const ir::Graph& graph, const std::unordered_set<std::string>& overridable, int64_t opset)
      : graph_(graph), overridable_(overridable), opset_(opset) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const auto& out : graph.nodes[i].outputs) producer_[out] = i;
      for (const auto& in : graph.nodes[i].inputs) {
        if (!in.empty()) consumers_[in].push_back(i);
      }
      for (const auto& in : graph.implicitInputs(graph.nodes[i])) pinned_.insert(in);
    }
    for (const auto& out : graph.outputs) pinned_.insert(out.name);
  }

  std::optional<PlannedEpilogue> planFrom(size_t anchor) {
    const ir::Node& conv = graph_.nodes[anchor];
    if (conv.opType != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 || conv.outputs.empty()) return {};
    const Tensor* w = constant(conv.inputs[1]);
    if (!w || w->dtype() != DataType::FLOAT || w->rank() < 3) return {};
    channels_ = w->dim(0);
    rank_ = w->rank();
    anchor_ = anchor;

    std::vector<FollowerStep> steps;
    std::vector<std::string> values{conv.outputs[0]};  // chain values, in order
    std::string tail = conv.outputs[0];
    while (true) {
      auto it = consumers_.find(tail);
      if (it == consumers_.end() || pinned_.count(tail)) break;
      const size_t next = *std::min_element(it->second.begin(), it->second.end());
      if (claimed_.count(next)) break;
      std::optional<FollowerStep> step = followerStep(next, tail, values);
      if (!step) break;
      step->node = next;
      steps.push_back(std::move(*step));
      tail = graph_.nodes[next].outputs[0];
      values.push_back(tail);
    }
    // Longest prefix whose inner values nobody outside it reads.
    size_t length = steps.size();
    for (; length > 0; --length) {
      std::unordered_set<size_t> inside{anchor};
      for (size_t s = 0; s < length; ++s) inside.insert(steps[s].node);
      bool closed = true;
      for (size_t v = 0; v < length && closed; ++v) {  // values[0..length-1] are inner, values[length] the result
        if (pinned_.count(values[v])) closed = false;
        for (size_t reader : consumers_[values[v]]) closed = closed && inside.count(reader);
      }
      if (closed) break;
    }
    if (length == 0) return {};

    PlannedEpilogue planned;
    planned.anchor = anchor;
    planned.output = values[length];
    auto epilogue = std::make_shared<ElementwiseEpilogue>();
    epilogue->channels = static_cast<int>(channels_);
    std::map<std::string, int> registers;
    // Values read later as operands are saved right after they are computed.
    std::unordered_set<std::string> readLater;
    for (size_t s = 0; s < length; ++s) {
      if (steps[s].operand && steps[s].operand->kind == ElementwiseEpilogue::Op::Operand::kRegister) {
        readLater.insert(steps[s].operand->name);
      }
    }
    auto save = [&](const std::string& value) {
      if (!readLater.count(value)) return true;
      if (static_cast<int>(registers.size()) >= kMaxRegisters) return false;
      const int index = static_cast<int>(registers.size());
      registers[value] = index;
      ElementwiseEpilogue::Op op;
      op.kind = ElementwiseEpilogue::Op::Kind::kSave;
      op.index = index;
      epilogue->ops.push_back(op);
      return true;
    };
    if (!save(values[0])) return {};
    for (size_t s = 0; s < length; ++s) {
      ElementwiseEpilogue::Op op = steps[s].op;
      if (steps[s].operand) {
        const OperandPlan& operand = *steps[s].operand;
        op.operand = operand.kind;
        if (operand.kind == ElementwiseEpilogue::Op::Operand::kConstant) {
          op.values = operand.constant;
        } else if (operand.kind == ElementwiseEpilogue::Op::Operand::kRegister) {
          op.index = registers.at(operand.name);
        } else {
          auto found = std::find(planned.inputs.begin(), planned.inputs.end(), operand.name);
          if (found == planned.inputs.end()) {
            if (planned.inputs.size() >= kMaxInputs) return {};
            planned.inputs.push_back(operand.name);
            found = planned.inputs.end() - 1;
          }
          op.index = static_cast<int>(found - planned.inputs.begin());
        }
      }
      epilogue->ops.push_back(std::move(op));
      planned.followers.push_back(steps[s].node);
      if (!save(values[s + 1])) return {};
    }
    claimed_.insert(planned.followers.begin(), planned.followers.end());
    epilogue->registers = static_cast<int>(registers.size());
    epilogue->inputCount = planned.inputs.size();
    planned.epilogue = std::move(epilogue);
    return planned;
  }

 private:
  const Tensor* constant(const std::string& name) const {
    auto it = graph_.initializers.find(name);
    return it == graph_.initializers.end() || overridable_.count(name) ? nullptr : &it->second;
  }

  // A float constant that broadcasts to [N, channels, ...] as one value or one value per channel.
  std::optional<std::vector<float>> channelConstant(const std::string& name) const {
    const Tensor* t = constant(name);
    if (!t || t->dtype() != DataType::FLOAT || t->rank() > rank_) return {};
    const float* data = t->data<float>();
    if (t->numel() == 1) return std::vector<float>{data[0]};
    // Right-aligned against [N, C, spatial...]: the channel axis is rank_ - 1 - (rank_ - 2) dims from the end.
    const size_t channelAxisFromEnd = rank_ - 2;
    if (t->rank() < channelAxisFromEnd + 1) return {};
    for (size_t d = 0; d < t->rank(); ++d) {
      const size_t fromEnd = t->rank() - 1 - d;
      const int64_t expected = fromEnd == channelAxisFromEnd ? channels_ : 1;
      if (t->dim(d) != expected) return {};
    }
    return std::vector<float>(data, data + channels_);
  }

  // How `name` can be read as an operand: a constant, an earlier chain value, or a runtime value ready before
  // the anchor runs.
  std::optional<OperandPlan> operandOf(const std::string& name, const std::vector<std::string>& values) const {
    using Operand = ElementwiseEpilogue::Op::Operand;
    if (std::find(values.begin(), values.end(), name) != values.end()) return OperandPlan{Operand::kRegister, name, {}};
    if (graph_.isInitializer(name) && !overridable_.count(name)) {
      auto perChannel = channelConstant(name);
      if (!perChannel) return {};
      return OperandPlan{Operand::kConstant, "", std::move(*perChannel)};
    }
    auto producer = producer_.find(name);
    if (producer != producer_.end() && producer->second > anchor_) return {};
    return OperandPlan{Operand::kInput, name, {}};  // shape and type are checked at run time
  }

  std::optional<float> scalarAttributeOrInput(const ir::Node& node, size_t input, const char* attr, float fallback) const {
    if (opset_ < 11) return node.attrFloat(attr, fallback);
    if (node.inputs.size() <= input || node.inputs[input].empty()) return fallback;
    const Tensor* t = constant(node.inputs[input]);
    if (!t || t->dtype() != DataType::FLOAT || t->numel() != 1) return {};
    return t->data<float>()[0];
  }

  std::optional<FollowerStep> followerStep(size_t index, const std::string& tail,
                                           const std::vector<std::string>& values) const {
    using Kind = ElementwiseEpilogue::Op::Kind;
    const ir::Node& node = graph_.nodes[index];
    const std::optional<FollowerStep> none;
    if (!node.domain.empty() || node.outputs.size() != 1 || node.outputs[0].empty()) return none;
    FollowerStep r;
    const std::string& op = node.opType;
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      if (node.inputs.size() != 2 || (opset_ < 7 && node.attrInt("broadcast", 0) != 0)) return none;
      const bool tailFirst = node.inputs[0] == tail;
      if (!tailFirst && node.inputs[1] != tail) return none;
      if (node.inputs[0] == node.inputs[1]) return none;
      auto operand = operandOf(node.inputs[tailFirst ? 1 : 0], values);
      if (!operand) return none;
      r.op.kind = Kind::kBinary;
      r.op.binary = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
      r.op.operandFirst = !tailFirst;
      r.operand = std::move(operand);
      return r;
    }
    if (node.inputs.empty() || node.inputs[0] != tail) return none;
    if (op == "Relu" && node.inputs.size() == 1) {
      r.op.kind = Kind::kRelu;
    } else if (op == "Sigmoid" && node.inputs.size() == 1) {
      r.op.kind = Kind::kSigmoid;
    } else if (op == "HardSigmoid") {
      r.op.kind = Kind::kHardSigmoid;
      r.op.a = node.attrFloat("alpha", 0.2f);
      r.op.b = node.attrFloat("beta", 0.5f);
    } else if (op == "LeakyRelu") {
      r.op.kind = Kind::kLeakyRelu;
      r.op.a = node.attrFloat("alpha", 0.01f);
    } else if (op == "HardSwish") {
      r.op.kind = Kind::kHardSwish;
    } else if (op == "Clip") {
      const auto lo = scalarAttributeOrInput(node, 1, "min", -std::numeric_limits<float>::infinity());
      const auto hi = scalarAttributeOrInput(node, 2, "max", std::numeric_limits<float>::infinity());
      if (!lo || !hi) return none;
      r.op.kind = Kind::kClip;
      r.op.a = *lo;
      r.op.b = *hi;
    } else {
      return none;
    }
    return r;
  }

  const ir::Graph& graph_;
  const std::unordered_set<std::string>& overridable_;
  int64_t opset_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::unordered_set<std::string> pinned_;  // graph outputs and values read by subgraph bodies
  std::unordered_set<size_t> claimed_;      // followers of chains planned so far
  int64_t channels_ = 0;
  size_t rank_ = 0;
  size_t anchor_ = 0;
};

}  // namespace

std::vector<PlannedEpilogue> planEpilogues(const ir::Graph& graph, const std::unordered_set<std::string>& overridable,
                                           int64_t opset) {
  ChainPlanner planner(graph, overridable, opset);
  std::vector<PlannedEpilogue> plans;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (auto plan = planner.planFrom(i)) plans.push_back(std::move(*plan));  // anchors are never followers (Conv)
  }
  return plans;
}

}  // namespace kiln::cpu
