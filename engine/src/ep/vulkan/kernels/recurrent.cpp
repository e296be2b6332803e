// Vulkan kernels: LSTM (forward, reverse, bidirectional; layout 0 and 1; default activations; optional bias,
// initial_h, initial_c and peepholes), shaders/lstm.comp. One dispatch per time step runs every direction at
// once and writes h into Y, which the next step reads back as h_prev. Clip, other activations, input_forget
// and partial sequence_lens stay with the CPU EP. With float16 inputs the state still runs in float32 (as the CPU
// EP computes float16 LSTMs) and the outputs are cast to float16 at the end (shaders/cast.comp).
#include <algorithm>
#include <cctype>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

enum : uint32_t { kHasBias = 1, kHasPeepholes = 2, kHasInitialH = 4, kHasInitialC = 8, kBatchFirst = 16 };

class LstmKernel final : public VkKernel {
 public:
  explicit LstmKernel(const KernelCreateInfo& info) : storage_(floatStorage(info)) {
    shader_ = useShader(storedAs(ShaderVariant{"lstm", {}, 9, kLocal}, storage_));
    if (storage_ == DataType::FLOAT16) {
      ShaderVariant cast{"cast", {}, 2, kLocal};
      cast.define("SRC_TYPE", 0).define("DST_TYPE", 3);  // float32 -> float16 (see cast.cpp)
      toHalf_ = useShader(cast);
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
      if (!outputs[i]) continue;
      uint32_t rowStride = 0;
      const uint64_t count = static_cast<uint64_t>(outputs[i]->elementCount());
      const auto groups = linearGroups(count, kLocal, &rowStride);
      PushConstants push;
      push.u32(count).u32(rowStride);
      const BufferRange buffers[] = {sources[i], outputs[i]->range()};
      KILN_RETURN_IF_ERROR(ctx.dispatch(toHalf_, buffers, push.data(), push.size(), groups));
    }
    return Status::ok();
  }

  // Y_h: each direction's last h, the rows of Y at its final time step (one copy per direction, or per batch
  // row and direction with the batch first).
  Status copyLastH(RecordContext& ctx, const BufferRange& y, const BufferRange& yh, int64_t S, int64_t N,
                   int64_t H) {
    const int64_t D = directions_, rows = batchFirst_ ? 1 : N;
    const uint64_t bytes = static_cast<uint64_t>(rows * H) * 4;
    for (int64_t b = 0; b < (batchFirst_ ? N : 1); ++b) {
      for (int64_t d = 0; d < D; ++d) {
        const int64_t t = (reverseMask_ >> d) & 1u ? 0 : S - 1;
        const int64_t fromRow = batchFirst_ ? (b * S + t) * D + d : (t * D + d) * N;
        const int64_t toRow = batchFirst_ ? b * D + d : d * N;
        BufferRange from = y, to = yh;
        from.offset += static_cast<uint64_t>(fromRow * H) * 4;
        to.offset += static_cast<uint64_t>(toRow * H) * 4;
        from.size = to.size = bytes;
        KILN_RETURN_IF_ERROR(ctx.copy(from, to, bytes));
      }
    }
    return Status::ok();
  }

  DataType storage_;
  uint32_t shader_ = 0, toHalf_ = 0;
  bool batchFirst_ = false;
  int64_t directions_ = 1;
  uint32_t reverseMask_ = 0;
  int64_t hidden_ = 0;
  bool wanted_[3] = {false, false, false};
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

}  // namespace

void registerRecurrentKernels(std::vector<KernelEntry>& out) {
  out.push_back({"LSTM", 7, 1 << 30, lstmSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new LstmKernel(info));
                 }});
}

}  // namespace kiln::vk
