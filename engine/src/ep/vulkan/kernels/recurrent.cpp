// Vulkan kernels: LSTM (forward, reverse, bidirectional; layout 0 and 1; default activations; optional bias,
// initial_h, initial_c and peepholes), shaders/lstm.comp, and GRU (the same directions and layouts,
// linear_before_reset 0 and 1, optional bias and initial_h), shaders/gru.comp. Each time step is one dispatch (two
// for a GRU without linear_before_reset) that runs every direction at once and writes h into Y, which the next
// step reads back as h_prev. Clip, other activations, input_forget and partial sequence_lens stay with the CPU EP.
// With float16 inputs the state still runs in float32 (as the CPU EP computes float16 recurrences) and the outputs
// are cast to float16 at the end (shaders/cast.comp).
#include <algorithm>
#include <cctype>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

// The sizes and direction settings both recurrent kernels address Y with.
struct SequenceGeometry {
  int64_t S, N, H, D;
  uint32_t reverseMask;  // bit d: direction d runs backwards in time
  bool batchFirst;       // layout 1
};

// Y_h: each direction's last h, the rows of Y at its final time step (one copy per direction, or per batch row and
// direction with the batch first). `y` and `yh` hold float32.
Status copyLastHidden(RecordContext& ctx, const BufferRange& y, const BufferRange& yh, const SequenceGeometry& g) {
  const int64_t rows = g.batchFirst ? 1 : g.N;
  const uint64_t bytes = static_cast<uint64_t>(rows * g.H) * 4;
  for (int64_t b = 0; b < (g.batchFirst ? g.N : 1); ++b) {
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t t = (g.reverseMask >> d) & 1u ? 0 : g.S - 1;
      const int64_t fromRow = g.batchFirst ? (b * g.S + t) * g.D + d : (t * g.D + d) * g.N;
      const int64_t toRow = g.batchFirst ? b * g.D + d : d * g.N;
      BufferRange from = y, to = yh;
      from.offset += static_cast<uint64_t>(fromRow * g.H) * 4;
      to.offset += static_cast<uint64_t>(toRow * g.H) * 4;
      from.size = to.size = bytes;
      KILN_RETURN_IF_ERROR(ctx.copy(from, to, bytes));
    }
  }
  return Status::ok();
}

// The float32 -> float16 variant of shaders/cast.comp (see cast.cpp), for the outputs of float16 nodes.
ShaderVariant castToHalfVariant() {
  ShaderVariant cast{"cast", {}, 2, kLocal};
  cast.define("SRC_TYPE", 0).define("DST_TYPE", 3);
  return cast;
}

// Casts the float32 `source` into the float16 output `out` with `shader` (castToHalfVariant).
Status castToHalf(RecordContext& ctx, uint32_t shader, const BufferRange& source, const VkTensor& out) {
  uint32_t rowStride = 0;
  const uint64_t count = static_cast<uint64_t>(out.elementCount());
  const auto groups = linearGroups(count, kLocal, &rowStride);
  PushConstants push;
  push.u32(count).u32(rowStride);
  const BufferRange buffers[] = {source, out.range()};
  return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
}

enum : uint32_t { kHasBias = 1, kHasPeepholes = 2, kHasInitialH = 4, kHasInitialC = 8, kBatchFirst = 16 };

class LstmKernel final : public VkKernel {
 public:
  explicit LstmKernel(const KernelCreateInfo& info) : storage_(floatStorage(info)) {
    shader_ = useShader(storedAs(ShaderVariant{"lstm", {}, 9, kLocal}, storage_));
    if (storage_ == DataType::FLOAT16) {
      toHalf_ = useShader(castToHalfVariant());
    }
    const std::string direction = info.node.attrString("direction", "forward");
    directions_ = direction == "bidirectional" ? 2 : 1;
    reverseMask_ = direction == "reverse" ? 1u : direction == "bidirectional" ? 2u : 0u;
    hidden_ = info.node.attrInt("hidden_size", 0);
    batchFirst_ = info.node.attrInt("layout", 0) == 1;
    for (size_t i = 0; i < 3; ++i) wanted_[i] = i < info.node.outputs.size() && !info.node.outputs[i].empty();
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* X, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* W, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* R, ctx.deviceInput(2));
    if (X->shape.size() != 3 || W->shape.size() != 3 || R->shape.size() != 3) {
      return Status(StatusCode::INVALID_ARGUMENT, "LSTM X, W and R must have rank 3");
    }
    const int64_t D = directions_, I = X->shape[2];
    const int64_t S = batchFirst_ ? X->shape[1] : X->shape[0], N = batchFirst_ ? X->shape[0] : X->shape[1];
    const int64_t H = hidden_ > 0 ? hidden_ : R->shape[2];
    if (W->shape != Shape{D, 4 * H, I} || R->shape != Shape{D, 4 * H, H}) {
      return Status(StatusCode::INVALID_ARGUMENT, "LSTM W " + shapeToString(W->shape) + " or R " +
                                                      shapeToString(R->shape) + " does not match X " +
                                                      shapeToString(X->shape) + " and hidden size " +
                                                      std::to_string(H));
    }
    if (S == 0) return Status(StatusCode::NOT_IMPLEMENTED, "LSTM over an empty sequence on Vulkan");
    if (ctx.input(4)) {
      KILN_ASSIGN_OR_RETURN(auto lengths, hostInts(ctx.input(4), "LSTM sequence_lens"));
      for (int64_t l : lengths) {
        if (l != S)
          return Status(StatusCode::NOT_IMPLEMENTED,
                        "LSTM sequence_lens shorter than the sequence on Vulkan");
      }
    }
    const Shape stateShape = batchFirst_ ? Shape{N, D, H} : Shape{D, N, H};
    // Optional inputs, checked for shape; absent ones bind X as a placeholder the shader does not read.
    uint32_t flags = batchFirst_ ? static_cast<uint32_t>(kBatchFirst) : 0u;
    BufferRange optional[4] = {X->range(), X->range(), X->range(), X->range()};
    const size_t optionalInputs[4] = {3, 7, 5, 6};
    const Shape optionalShapes[4] = {{D, 8 * H}, {D, 3 * H}, stateShape, stateShape};
    const uint32_t optionalFlags[4] = {kHasBias, kHasPeepholes, kHasInitialH, kHasInitialC};
    for (int k = 0; k < 4; ++k) {
      if (!ctx.input(optionalInputs[k])) continue;
      KILN_ASSIGN_OR_RETURN(const VkTensor* value, ctx.deviceInput(optionalInputs[k]));
      if (value->shape != optionalShapes[k]) {
        return Status(StatusCode::INVALID_ARGUMENT, "LSTM input " + std::to_string(optionalInputs[k]) +
                                                        " has shape " + shapeToString(value->shape) +
                                                        ", expected " + shapeToString(optionalShapes[k]));
      }
      optional[k] = value->range();
      flags |= optionalFlags[k];
    }
    // Y holds every step's h (the next step's h_prev), so it exists even when the node does not output it.
    BufferRange y, yc;
    const Shape yShape = batchFirst_ ? Shape{N, S, D, H} : Shape{S, D, N, H};
    if (storage_ == DataType::FLOAT16) return recordHalf(ctx, X, W, R, optional, flags, S, N, H, yShape, stateShape);
    if (wanted_[0]) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, DataType::FLOAT, yShape));
      y = out->range();
    } else {
      KILN_ASSIGN_OR_RETURN(y, ctx.scratch(static_cast<uint64_t>(shapeSize(yShape)) * 4));
    }
    if (wanted_[2]) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(2, DataType::FLOAT, stateShape));
      yc = out->range();
    } else {
      KILN_ASSIGN_OR_RETURN(yc, ctx.scratch(static_cast<uint64_t>(shapeSize(stateShape)) * 4));
    }
    const VkTensor* yh = nullptr;
    if (wanted_[1]) {
      KILN_ASSIGN_OR_RETURN(yh, ctx.allocateOutput(1, DataType::FLOAT, stateShape));
    }
    if (N == 0 || H == 0) return Status::ok();
    KILN_RETURN_IF_ERROR(recordSteps(ctx, X, W, R, optional, flags, S, N, H, y, yc));
    return yh ? copyLastH(ctx, y, yh->range(), S, N, H) : Status::ok();
  }

 private:
  Status recordSteps(RecordContext& ctx, const VkTensor* X, const VkTensor* W, const VkTensor* R,
                     const BufferRange* optional, uint32_t flags, int64_t S, int64_t N, int64_t H,
                     const BufferRange& y, const BufferRange& yc) {
    const BufferRange buffers[] = {X->range(),  W->range(),  R->range(), optional[0], optional[1],
                                   optional[2], optional[3], y,          yc};
    const int64_t D = directions_, I = X->shape[2];
    const std::array<uint32_t, 3> groups{static_cast<uint32_t>((H + kLocal - 1) / kLocal),
                                         static_cast<uint32_t>(N), static_cast<uint32_t>(D)};
    for (int64_t step = 0; step < S; ++step) {
      PushConstants push;
      push.u32(S).u32(N).u32(I).u32(H).u32(D).u32(step).u32(flags).u32(reverseMask_);
      KILN_RETURN_IF_ERROR(ctx.dispatch(shader_, buffers, push.data(), push.size(), groups));
    }
    return Status::ok();
  }

  // Float16 inputs: Y and Yc in float32 scratch, then each requested output cast to float16.
  Status recordHalf(RecordContext& ctx, const VkTensor* X, const VkTensor* W, const VkTensor* R,
                    const BufferRange* optional, uint32_t flags, int64_t S, int64_t N, int64_t H, const Shape& yShape,
                    const Shape& stateShape) {
    auto floats = [&](const Shape& shape) {
      return ctx.scratch(static_cast<uint64_t>(std::max<int64_t>(shapeSize(shape), 1)) * 4);
    };
    KILN_ASSIGN_OR_RETURN(BufferRange y, floats(yShape));
    KILN_ASSIGN_OR_RETURN(BufferRange yc, floats(stateShape));
    KILN_ASSIGN_OR_RETURN(BufferRange yh, floats(stateShape));
    const VkTensor* outputs[3] = {nullptr, nullptr, nullptr};
    const Shape* shapes[3] = {&yShape, &stateShape, &stateShape};
    for (size_t i = 0; i < 3; ++i) {
      if (wanted_[i]) {
        KILN_ASSIGN_OR_RETURN(outputs[i], ctx.allocateOutput(i, DataType::FLOAT16, *shapes[i]));
      }
    }
    if (N == 0 || H == 0) return Status::ok();
    KILN_RETURN_IF_ERROR(recordSteps(ctx, X, W, R, optional, flags, S, N, H, y, yc));
    if (outputs[1]) KILN_RETURN_IF_ERROR(copyLastH(ctx, y, yh, S, N, H));
    const BufferRange sources[3] = {y, yh, yc};
    for (size_t i = 0; i < 3; ++i) {
      if (outputs[i]) KILN_RETURN_IF_ERROR(castToHalf(ctx, toHalf_, sources[i], *outputs[i]));
    }
    return Status::ok();
  }

  Status copyLastH(RecordContext& ctx, const BufferRange& y, const BufferRange& yh, int64_t S, int64_t N,
                   int64_t H) {
    return copyLastHidden(ctx, y, yh, {S, N, H, directions_, reverseMask_, batchFirst_});
  }

  DataType storage_;
  uint32_t shader_ = 0, toHalf_ = 0;
  bool batchFirst_ = false;
  int64_t directions_ = 1;
  uint32_t reverseMask_ = 0;
  int64_t hidden_ = 0;
  bool wanted_[3] = {false, false, false};
};

// GRU on shaders/gru.comp: one dispatch per time step with linear_before_reset, two without (the candidate's
// recurrent term needs every unit's reset gate first). Y carries h between steps in float32; float16 nodes get
// their outputs cast at the end, as LSTM's.
class GruKernel final : public VkKernel {
 public:
  explicit GruKernel(const KernelCreateInfo& info)
      : storage_(floatStorage(info)), linearBeforeReset_(info.node.attrInt("linear_before_reset", 0) != 0) {
    ShaderVariant gates{"gru", {}, 7, kLocal};
    gates.define("LBR", linearBeforeReset_ ? 1 : 0).define("PHASE", 0);
    gates_ = useShader(storedAs(gates, storage_));
    if (!linearBeforeReset_) {
      ShaderVariant candidate{"gru", {}, 7, kLocal};
      candidate.define("LBR", 0).define("PHASE", 1);
      candidate_ = useShader(storedAs(candidate, storage_));
    }
    if (storage_ == DataType::FLOAT16) toHalf_ = useShader(castToHalfVariant());
    const std::string direction = info.node.attrString("direction", "forward");
    directions_ = direction == "bidirectional" ? 2 : 1;
    reverseMask_ = direction == "reverse" ? 1u : direction == "bidirectional" ? 2u : 0u;
    hidden_ = info.node.attrInt("hidden_size", 0);
    batchFirst_ = info.node.attrInt("layout", 0) == 1;
    for (size_t i = 0; i < 2; ++i) wanted_[i] = i < info.node.outputs.size() && !info.node.outputs[i].empty();
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* X, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* W, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* R, ctx.deviceInput(2));
    if (X->shape.size() != 3 || W->shape.size() != 3 || R->shape.size() != 3) {
      return Status(StatusCode::INVALID_ARGUMENT, "GRU X, W and R must have rank 3");
    }
    const int64_t D = directions_, I = X->shape[2];
    const int64_t S = batchFirst_ ? X->shape[1] : X->shape[0], N = batchFirst_ ? X->shape[0] : X->shape[1];
    const int64_t H = hidden_ > 0 ? hidden_ : R->shape[2];
    if (W->shape != Shape{D, 3 * H, I} || R->shape != Shape{D, 3 * H, H}) {
      return Status(StatusCode::INVALID_ARGUMENT, "GRU W " + shapeToString(W->shape) + " or R " +
                                                      shapeToString(R->shape) + " does not match X " +
                                                      shapeToString(X->shape) + " and hidden size " +
                                                      std::to_string(H));
    }
    if (S == 0) return Status(StatusCode::NOT_IMPLEMENTED, "GRU over an empty sequence on Vulkan");
    if (ctx.input(4)) {
      KILN_ASSIGN_OR_RETURN(auto lengths, hostInts(ctx.input(4), "GRU sequence_lens"));
      for (int64_t l : lengths) {
        if (l != S) return Status(StatusCode::NOT_IMPLEMENTED, "GRU sequence_lens shorter than the sequence on Vulkan");
      }
    }
    const Shape stateShape = batchFirst_ ? Shape{N, D, H} : Shape{D, N, H};
    uint32_t flags = batchFirst_ ? static_cast<uint32_t>(kBatchFirst) : 0u;
    // Optional inputs, checked for shape; absent ones bind X as a placeholder the shader does not read.
    BufferRange optional[2] = {X->range(), X->range()};
    const size_t optionalInputs[2] = {3, 5};
    const Shape optionalShapes[2] = {{D, 6 * H}, stateShape};
    const uint32_t optionalFlags[2] = {kHasBias, kHasInitialH};
    for (int k = 0; k < 2; ++k) {
      if (!ctx.input(optionalInputs[k])) continue;
      KILN_ASSIGN_OR_RETURN(const VkTensor* value, ctx.deviceInput(optionalInputs[k]));
      if (value->shape != optionalShapes[k]) {
        return Status(StatusCode::INVALID_ARGUMENT, "GRU input " + std::to_string(optionalInputs[k]) +
                                                        " has shape " + shapeToString(value->shape) +
                                                        ", expected " + shapeToString(optionalShapes[k]));
      }
      optional[k] = value->range();
      flags |= optionalFlags[k];
    }
    const Shape yShape = batchFirst_ ? Shape{N, S, D, H} : Shape{S, D, N, H};
    const bool half = storage_ == DataType::FLOAT16;
    const VkTensor* outputs[2] = {nullptr, nullptr};
    const Shape* shapes[2] = {&yShape, &stateShape};
    for (size_t i = 0; i < 2; ++i) {
      if (wanted_[i]) {
        const DataType type = half ? DataType::FLOAT16 : DataType::FLOAT;
        KILN_ASSIGN_OR_RETURN(outputs[i], ctx.allocateOutput(i, type, *shapes[i]));
      }
    }
    if (N == 0 || H == 0) return Status::ok();
    auto floats = [&](int64_t count) { return ctx.scratch(static_cast<uint64_t>(count) * 4); };
    // Y holds every step's h (the next step's h_prev) in float32, so it exists even when the node does not output it.
    BufferRange y, gates;
    if (outputs[0] && !half) {
      y = outputs[0]->range();
    } else {
      KILN_ASSIGN_OR_RETURN(y, floats(shapeSize(yShape)));
    }
    if (linearBeforeReset_) {
      gates = y;  // unused by the one-phase variant
    } else {
      KILN_ASSIGN_OR_RETURN(gates, floats(D * N * 3 * H));
    }
    const BufferRange buffers[] = {X->range(), W->range(), R->range(), optional[0], optional[1], y, gates};
    const std::array<uint32_t, 3> groups{static_cast<uint32_t>((H + kLocal - 1) / kLocal), static_cast<uint32_t>(N),
                                         static_cast<uint32_t>(D)};
    for (int64_t step = 0; step < S; ++step) {
      PushConstants push;
      push.u32(S).u32(N).u32(I).u32(H).u32(D).u32(step).u32(flags).u32(reverseMask_);
      KILN_RETURN_IF_ERROR(ctx.dispatch(gates_, buffers, push.data(), push.size(), groups));
      if (!linearBeforeReset_) {
        KILN_RETURN_IF_ERROR(ctx.dispatch(candidate_, buffers, push.data(), push.size(), groups));
      }
    }
    const SequenceGeometry geometry{S, N, H, D, reverseMask_, batchFirst_};
    if (outputs[1] && !half) KILN_RETURN_IF_ERROR(copyLastHidden(ctx, y, outputs[1]->range(), geometry));
    if (outputs[1] && half) {
      KILN_ASSIGN_OR_RETURN(BufferRange yh, floats(shapeSize(stateShape)));
      KILN_RETURN_IF_ERROR(copyLastHidden(ctx, y, yh, geometry));
      KILN_RETURN_IF_ERROR(castToHalf(ctx, toHalf_, yh, *outputs[1]));
    }
    if (outputs[0] && half) KILN_RETURN_IF_ERROR(castToHalf(ctx, toHalf_, y, *outputs[0]));
    return Status::ok();
  }

 private:
  DataType storage_;
  bool linearBeforeReset_;
  uint32_t gates_ = 0, candidate_ = 0, toHalf_ = 0;
  bool batchFirst_ = false;
  int64_t directions_ = 1;
  uint32_t reverseMask_ = 0;
  int64_t hidden_ = 0;
  bool wanted_[2] = {false, false};
};

bool sameName(std::string a, const char* b) {
  for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return a == b;
}

NodeSupport lstmSupport(const SupportQuery& q) {
  const ir::Node& node = q.node;
  const std::string direction = node.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return unsupported("LSTM direction '" + direction + "'");
  }
  if (node.attrInt("layout", 0) != 0 && node.attrInt("layout", 0) != 1)
    return unsupported("LSTM layout other than 0 and 1");
  if (node.hasAttribute("clip")) return unsupported("LSTM clip");
  if (node.attrInt("input_forget", 0) != 0) return unsupported("LSTM input_forget");
  const std::vector<std::string> activations = node.attrStrings("activations");
  const char* defaults[3] = {"sigmoid", "tanh", "tanh"};
  for (size_t i = 0; i < activations.size(); ++i) {
    if (!sameName(activations[i], defaults[i % 3])) return unsupported("LSTM activation " + activations[i]);
  }
  NodeSupport s = requireFloat(q, {0, 1, 2, 3, 5, 6, 7});
  return s.supported ? requireHostInput(q, 4, "LSTM sequence_lens") : s;
}

// sequence_lens (input 4) is taken only when it is a constant whose every entry is X's fixed sequence length (dim
// `seqAxis`): the shader has no per-row masking, and a shorter length found at run time could not fall back.
NodeSupport checkFullLengths(const SupportQuery& q, size_t seqAxis) {
  const Tensor* lengths = q.constantInputs.size() > 4 ? q.constantInputs[4] : nullptr;
  const ir::ValueInfo* x = q.inputInfo.empty() ? nullptr : q.inputInfo[0];
  const bool fixed = x && x->shape && x->shape->size() == 3 && (*x->shape)[seqAxis].isFixed();
  if (!lengths || !fixed) {
    return unsupported("sequence_lens that is not a constant beside a fixed sequence length (partial sequences stay "
                       "with the CPU EP)");
  }
  const int64_t S = (*x->shape)[seqAxis].value;
  for (int64_t i = 0; i < lengths->numel(); ++i) {
    const int64_t l = lengths->dtype() == DataType::INT32 ? lengths->data<int32_t>()[i]
                      : lengths->dtype() == DataType::INT64 ? lengths->data<int64_t>()[i] : -1;
    if (l != S) {
      return unsupported("sequence_lens entry " + std::to_string(l) + " is not the sequence length " +
                         std::to_string(S) + " (partial sequences stay with the CPU EP)");
    }
  }
  return supported();
}

NodeSupport gruSupport(const SupportQuery& q) {
  const ir::Node& node = q.node;
  const std::string direction = node.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return unsupported("GRU direction '" + direction + "'");
  }
  if (node.attrInt("layout", 0) != 0 && node.attrInt("layout", 0) != 1)
    return unsupported("GRU layout other than 0 and 1");
  if (node.hasAttribute("clip")) return unsupported("GRU clip");
  const std::vector<std::string> activations = node.attrStrings("activations");
  const char* defaults[2] = {"sigmoid", "tanh"};
  for (size_t i = 0; i < activations.size(); ++i) {
    if (!sameName(activations[i], defaults[i % 2])) return unsupported("GRU activation " + activations[i]);
  }
  NodeSupport s = requireFloat(q, {0, 1, 2, 3, 5});
  if (!s.supported || !q.hasInput(4)) return s;
  return checkFullLengths(q, node.attrInt("layout", 0) == 1 ? 1 : 0);
}

}  // namespace

void registerRecurrentKernels(std::vector<KernelEntry>& out) {
  out.push_back({"LSTM", 7, 1 << 30, lstmSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new LstmKernel(info));
                 }});
  out.push_back({"GRU", 7, 1 << 30, gruSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GruKernel(info));
                 }});
}

}  // namespace kiln::vk
