// Vulkan kernels: Conv and ConvTranspose over 1 or 2 spatial dims (1-D as height 1), float32 or float16 storage
// (X, W, B and Y of one type; packed weights keep W's type, accumulation is float32). Weights are
// packed into blocks of 4 output channels so the shaders read one vec4 per tap (shaders/conv2d.comp,
// shaders/conv_transpose2d.comp): constant W at creation, any other W on the device each run
// (shaders/conv_pack.comp). Conv can fuse a following activation: the graph optimizer sets the node attributes
// kiln_activation ("Relu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid", "LeakyRelu") and
// kiln_activation_params (alpha, beta; defaults as the ONNX ops) and drops the activation node.
// Window geometry (auto_pad, pads, output_shape, ...) is resolved exactly as the CPU EP does.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"
#include "ops/window_geometry.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr int64_t kBlock = 4;  // output channels per vec4 weight

struct Activation {
  int code = 0;
  float alpha = 0, beta = 0;
};

// The fused activation requested by the optimizer, or nullopt when the name is unknown.
std::optional<Activation> readActivation(const ir::Node& node) {
  const std::string name = node.attrString("kiln_activation", "");
  const std::vector<float> params = node.attrFloats("kiln_activation_params");
  auto param = [&](size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
  if (name.empty()) return Activation{};
  if (name == "Relu") return Activation{1};
  if (name == "Clip") return Activation{2, param(0, -INFINITY), param(1, INFINITY)};
  if (name == "HardSigmoid") return Activation{3, param(0, 0.2f), param(1, 0.5f)};
  if (name == "HardSwish") return Activation{4};
  if (name == "Sigmoid") return Activation{5};
  if (name == "LeakyRelu") return Activation{6, param(0, 0.01f)};
  return std::nullopt;
}

// Weights [rows, perRow, K] (Conv: [M, Cg, K] with rows = M; ConvTranspose: [C, Mg, K]) repacked as
// [group][mBlock][c][K][4] with zero-padded output channels. `transposed` selects the ConvTranspose layout.
template <class T>
Tensor packWeightsAs(const Tensor& w, int64_t group, bool transposed) {
  const int64_t K = shapeSize(Shape(w.shape().begin() + 2, w.shape().end()));
  const int64_t Mg = transposed ? w.dim(1) : w.dim(0) / group;
  const int64_t Cg = transposed ? w.dim(0) / group : w.dim(1);
  const int64_t mBlocks = (Mg + kBlock - 1) / kBlock;
  Tensor packed(w.dtype(), {group * mBlocks * Cg * K * kBlock});  // zero-filled: the padding channels
  T* out = packed.data<T>();
  const T* in = w.data<T>();
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t m = 0; m < Mg; ++m) {
      for (int64_t c = 0; c < Cg; ++c) {
        for (int64_t k = 0; k < K; ++k) {
          const int64_t src = transposed ? ((g * Cg + c) * Mg + m) * K + k : ((g * Mg + m) * Cg + c) * K + k;
          out[(((g * mBlocks + m / kBlock) * Cg + c) * K + k) * kBlock + m % kBlock] = in[src];
        }
      }
    }
  }
  return packed;
}

Tensor packWeights(const Tensor& w, int64_t group, bool transposed) {
  return w.dtype() == DataType::FLOAT16 ? packWeightsAs<Float16>(w, group, transposed)
                                        : packWeightsAs<float>(w, group, transposed);
}

// W when it is a constant (an initializer), else nullptr.
const Tensor* constantW(const KernelCreateInfo& info) {
  return info.constantInputs.size() > 1 ? info.constantInputs[1] : nullptr;
}

// Where a convolution's packed weights and bias come from: constants packed at load, or the W/B inputs, with
// W repacked on the device each run (conv_pack.comp) when it is not a constant.
class ConvWeights {
 public:
  ConvWeights(const KernelCreateInfo& info, bool transposed, uint32_t packShader,
              const std::function<uint32_t(std::function<Tensor()>)>& addConstant,
              const std::function<void(size_t)>& absorbInput)
      : transposed_(transposed), packShader_(packShader), group_(info.node.attrInt("group", 1)) {
    const Tensor* w = constantW(info);
    const Tensor* b = info.constantInputs.size() > 2 ? info.constantInputs[2] : nullptr;
    if (w) {
      wShape_ = w->shape();
      const bool depthwise = !transposed && w->dim(1) == 1 && w->dim(0) == group_;
      packed_ = addConstant([&] { return depthwise ? w->reshaped({w->numel()}) : packWeights(*w, group_, transposed); });
      absorbInput(1);
    }
    if (b) {
      bias_ = addConstant([&] { return b->reshaped({b->numel()}); });
      absorbInput(2);
    }
  }

  // W's shape: the constant's, or the input's at record time.
  Shape shape(RecordContext& ctx) const { return packed_ ? wShape_ : ctx.input(1)->shape; }

  // The packed weights (for `depthwise`, W as is), repacking a non-constant W into scratch.
  Result<BufferRange> weights(RecordContext& ctx, bool depthwise) const {
    if (packed_) return ctx.constant(*packed_).range();
    KILN_ASSIGN_OR_RETURN(const VkTensor* w, ctx.deviceInput(1));
    if (depthwise) return w->range();
    const Shape& ws = w->shape;
    const int64_t K = shapeSize(Shape(ws.begin() + 2, ws.end()));
    const int64_t Mg = transposed_ ? ws[1] : ws[0] / group_, Cg = transposed_ ? ws[0] / group_ : ws[1];
    const int64_t mBlocks = (Mg + kBlock - 1) / kBlock, count = group_ * mBlocks * Cg * K * kBlock;
    KILN_ASSIGN_OR_RETURN(BufferRange packed,
                          ctx.scratch(static_cast<uint64_t>(std::max<int64_t>(count, 1)) * dataTypeSize(w->dtype)));
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(count), kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride).u32(Mg).u32(Cg).u32(K).u32(mBlocks);
    const BufferRange buffers[] = {w->range(), packed};
    KILN_RETURN_IF_ERROR(ctx.dispatch(packShader_, buffers, push.data(), push.size(), groups));
    return packed;
  }

  // The bias buffer and whether there is one (`fallback` is bound, unread, when there is none).
  Result<std::pair<BufferRange, bool>> bias(RecordContext& ctx, const BufferRange& fallback) const {
    if (bias_) return std::make_pair(ctx.constant(*bias_).range(), true);
    if (!ctx.input(2)) return std::make_pair(fallback, false);
    KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(2));
    return std::make_pair(b->range(), true);
  }

 private:
  bool transposed_;
  uint32_t packShader_;
  int64_t group_;
  Shape wShape_;
  std::optional<uint32_t> packed_, bias_;
};

// Spatial dims as (H, W): 1-D convolutions run with height 1.
std::array<int64_t, 2> hw(const std::vector<int64_t>& v, int64_t fill) {
  return v.size() == 1 ? std::array<int64_t, 2>{fill, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

Status checkDispatch(uint64_t x, uint64_t z) {
  if (x > 65535 || z > 65535) return Status(StatusCode::NOT_IMPLEMENTED, "convolution too large for one dispatch");
  return Status::ok();
}

ShaderVariant packVariant(bool transposed, DataType storage) {
  ShaderVariant variant{"conv_pack", {}, 2, kLocal};
  variant.define("TRANSPOSED", transposed ? 1 : 0);
  return storedAs(variant, storage);
}

class ConvKernel final : public VkKernel {
 public:
  ConvKernel(const KernelCreateInfo& info, const Activation& act)
      : attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        act_(act),
        weights_(info, false, constantW(info) ? 0 : useShader(packVariant(false, floatStorage(info))),
                 [this, &info](std::function<Tensor()> produce) { return addConstant(info, produce); },
                 [this](size_t i) { absorbInput(i); }) {
    // Depthwise and pointwise fast paths are chosen when W's shape is known now; the general variant runs
    // every shape.
    const Tensor* w = constantW(info);
    const bool depthwise = w && w->dim(1) == 1 && w->dim(0) == group_;
    bool pointwise = w != nullptr;
    for (int64_t i = 2; w && i < static_cast<int64_t>(w->rank()); ++i) pointwise = pointwise && w->dim(i) == 1;
    for (int64_t s : attrs_.strides) pointwise = pointwise && s == 1;
    if (attrs_.autoPad == "NOTSET") {
      for (int64_t pad : attrs_.pads) pointwise = pointwise && pad == 0;
    }
    ShaderVariant variant = storedAs(ShaderVariant{"conv2d", {}, 4, kLocal}, floatStorage(info));
    variant.define("DEPTHWISE", depthwise ? 1 : 0).define("POINTWISE", pointwise && !depthwise ? 1 : 0);
    variant.define("ACTIVATION", act.code);
    // Register tile (see conv2d.comp): GPUs 1 pixel x up to 4 channel blocks; llvmpipe 8 pixels x up to 2
    // blocks (measured on PP-OCRv4's convs: 2-4x faster than 1 x 4 there).
    const int64_t mBlocks = w ? (w->dim(0) / std::max<int64_t>(group_, 1) + kBlock - 1) / kBlock : 4;
    const bool cpu = info.device.isCpu();
    // The default first, then the other tiles (registered as candidatesToRegister says).
    std::vector<std::pair<int64_t, int64_t>> tiles = {{std::clamp<int64_t>(mBlocks, 1, cpu ? 2 : 4), cpu ? 8 : 1}};
    for (auto tile : std::initializer_list<std::pair<int64_t, int64_t>>{{1, 1}, {2, 1}, {4, 1}, {1, 4}, {2, 4},
                                                                        {1, 8}, {2, 8}, {4, 4}}) {
      tile.first = std::clamp<int64_t>(tile.first, 1, mBlocks);
      if (std::find(tiles.begin(), tiles.end(), tile) == tiles.end()) tiles.push_back(tile);
    }
    std::vector<std::string> names;
    for (const auto& [cb, pix] : tiles) names.push_back(tileName(cb, pix));
    for (size_t chosen : candidatesToRegister(info, names)) {
      const auto [cb, pix] = tiles[chosen];
      ShaderVariant tiled = variant;
      tiled.define("PIX", std::to_string(pix) + "u");
      tiled.define("CB", std::to_string(cb) + "u");
      candidates_.push_back({cb, pix, useShader(tiled)});
    }
    depthwise_ = depthwise;
    selectCandidate(0);
  }

  size_t candidateCount() const override { return candidates_.size() > 1 ? candidates_.size() : 0; }
  void selectCandidate(size_t index) override {
    cb_ = candidates_[index].cb;
    pix_ = candidates_[index].pix;
    shader_ = candidates_[index].shader;
  }
  std::string candidateName(size_t index) const override {
    return tileName(candidates_[index].cb, candidates_[index].pix);
  }
  // "8px x 2cb": pixels x channel blocks per invocation (stored in tuned context binaries: keep it stable).
  static std::string tileName(int64_t cb, int64_t pix) {
    return std::to_string(pix) + "px x " + std::to_string(cb) + "cb";
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const Shape& xs = x->shape;
    const Shape ws = weights_.shape(ctx);
    if (ws.size() < 3 || xs.size() != ws.size()) {
      return Status(StatusCode::INVALID_ARGUMENT, "Conv input " + shapeToString(xs) + " does not match W " +
                                                      shapeToString(ws));
    }
    const int64_t M = ws[0], Cg = ws[1];
    if (xs[1] != Cg * group_ || M % group_ != 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "Conv input " + shapeToString(xs) + " does not match W " +
                                                      shapeToString(ws) + " with group " + std::to_string(group_));
    }
    const std::vector<int64_t> spatial(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::resolveForwardWindow(attrs_, spatial, kernel));
    Shape ys = {xs[0], M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, ys));
    const auto in = hw(g.in, 1), out = hw(g.out, 1), k = hw(g.kernel, 1), s = hw(g.strides, 1),
               d = hw(g.dilations, 1), pad = hw(g.padBegin, 0);
    const int64_t Mg = M / group_, mBlocks = (Mg + kBlock - 1) / kBlock;
    const int64_t chunks = depthwise_ ? 1 : (mBlocks + cb_ - 1) / cb_;
    uint32_t rowStride = 0;
    auto groups = linearGroups(static_cast<uint64_t>((out[0] * out[1] + pix_ - 1) / pix_), kLocal, &rowStride);
    const uint64_t gz = static_cast<uint64_t>(xs[0] * group_ * chunks);
    KILN_RETURN_IF_ERROR(checkDispatch(1, gz));
    groups[2] = static_cast<uint32_t>(gz);
    if (y->elementCount() == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(BufferRange w, weights_.weights(ctx, depthwise_));
    KILN_ASSIGN_OR_RETURN(auto bias, weights_.bias(ctx, w));
    PushConstants push;
    push.u32(Cg).u32(in[0]).u32(in[1]).u32(out[0]).u32(out[1]).u32(Mg).u32(group_).u32(mBlocks);
    push.u32(k[0]).u32(k[1]).u32(s[0]).u32(s[1]).u32(d[0]).u32(d[1]).i32(pad[0]).i32(pad[1]);
    push.f32(act_.alpha).f32(act_.beta).u32(bias.second ? 1 : 0).u32(rowStride).u32(chunks);
    const BufferRange buffers[] = {x->range(), w, bias.first, y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  ops::WindowAttributes attrs_;
  int64_t group_;
  Activation act_;
  ConvWeights weights_;
  bool depthwise_ = false;
  struct Candidate {
    int64_t cb, pix;
    uint32_t shader;
  };
  std::vector<Candidate> candidates_;
  int64_t cb_ = 4, pix_ = 1;
  uint32_t shader_ = 0;
};

class ConvTransposeKernel final : public VkKernel {
 public:
  explicit ConvTransposeKernel(const KernelCreateInfo& info)
      : attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        outputPadding_(info.node.attrInts("output_padding")),
        outputShape_(info.node.attrInts("output_shape")),
        weights_(info, true, constantW(info) ? 0 : useShader(packVariant(true, floatStorage(info))),
                 [this, &info](std::function<Tensor()> produce) { return addConstant(info, produce); },
                 [this](size_t i) { absorbInput(i); }) {
    // Pixels per invocation (sharing taps and weights, see conv_transpose2d.comp): 8 on llvmpipe as for Conv.
    pix_ = info.device.isCpu() ? 8 : 1;
    ShaderVariant variant = storedAs(ShaderVariant{"conv_transpose2d", {}, 4, kLocal}, floatStorage(info));
    variant.define("PIX", std::to_string(pix_) + "u");
    shader_ = useShader(variant);
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const Shape& xs = x->shape;
    const Shape ws = weights_.shape(ctx);
    if (ws.size() < 3 || xs.size() != ws.size() || xs[1] != ws[0] || ws[0] % group_ != 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "ConvTranspose input " + shapeToString(xs) + " does not match W " +
                                                      shapeToString(ws));
    }
    const int64_t Mg = ws[1], Cg = ws[0] / group_, mBlocks = (Mg + kBlock - 1) / kBlock;
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, resolveGeometry(xs, std::vector<int64_t>(ws.begin() + 2, ws.end())));
    Shape ys = {xs[0], Mg * group_};
    ys.insert(ys.end(), g.in.begin(), g.in.end());
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, ys));
    if (y->elementCount() == 0) return Status::ok();
    // The geometry's `out` is the input grid and `in` the output image (see ops::WindowGeometry).
    const auto grid = hw(g.out, 1), image = hw(g.in, 1), k = hw(g.kernel, 1), s = hw(g.strides, 1),
               d = hw(g.dilations, 1), pad = hw(g.padBegin, 0);
    uint32_t rowStride = 0;
    const int64_t perRow = (image[1] + s[1] * pix_ - 1) / (s[1] * pix_) * s[1];
    auto groups = linearGroups(static_cast<uint64_t>(image[0] * perRow), kLocal, &rowStride);
    const uint64_t gz = static_cast<uint64_t>(xs[0] * group_ * mBlocks);
    KILN_RETURN_IF_ERROR(checkDispatch(1, gz));
    groups[2] = static_cast<uint32_t>(gz);
    KILN_ASSIGN_OR_RETURN(BufferRange w, weights_.weights(ctx, false));
    KILN_ASSIGN_OR_RETURN(auto bias, weights_.bias(ctx, w));
    PushConstants push;
    push.u32(Cg).u32(grid[0]).u32(grid[1]).u32(image[0]).u32(image[1]).u32(Mg).u32(group_).u32(mBlocks);
    push.u32(k[0]).u32(k[1]).u32(s[0]).u32(s[1]).u32(d[0]).u32(d[1]).i32(pad[0]).i32(pad[1]).u32(rowStride);
    push.u32(bias.second ? 1 : 0);
    const BufferRange buffers[] = {x->range(), w, bias.first, y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  // The CPU EP's rules (ops::resolveTransposedWindow), so both EPs size outputs identically.
  Result<ops::WindowGeometry> resolveGeometry(const Shape& xs, const std::vector<int64_t>& kernel) const {
    return ops::resolveTransposedWindow(attrs_, outputPadding_, outputShape_,
                                        std::vector<int64_t>(xs.begin() + 2, xs.end()), kernel);
  }

  ops::WindowAttributes attrs_;
  int64_t group_;
  std::vector<int64_t> outputPadding_, outputShape_;
  ConvWeights weights_;
  int64_t pix_ = 1;
  uint32_t shader_ = 0;
};

// Shared support rules: float32 (or float16 storage: X, W, B and Y all float16), 1-D/2-D (rank 3 or 4 known from W or X), a known auto_pad and activation.
// W and B may be constants (packed at load) or device values (W repacked each run).
NodeSupport checkConvLike(const SupportQuery& q, bool transposed) {
  NodeSupport s = requireFloat(q, {0});
  if (!s.supported) return s;
  if (!q.hasInput(1)) return unsupported("W (input 1) is missing");
  const DataType want = q.inputType(0) == DataType::FLOAT16 ? DataType::FLOAT16 : DataType::FLOAT;
  // Initializers may come without a ValueInfo: their type is the constant's.
  for (size_t i = 1; i < 3; ++i) {
    const Tensor* c = i < q.constantInputs.size() ? q.constantInputs[i] : nullptr;
    const DataType type = c ? c->dtype() : q.inputType(i);
    if (q.hasInput(i) && type != want) {
      return unsupported("input " + std::to_string(i) + " is " + dataTypeName(type) + " (the Vulkan kernel takes " +
                         dataTypeName(want) + " here, as X)");
    }
  }
  const Tensor* w = q.constantInputs.size() > 1 ? q.constantInputs[1] : nullptr;
  const int rank = w ? static_cast<int>(w->rank()) : std::max(q.inputRank(0), q.inputRank(1));
  if (rank != 3 && rank != 4) return unsupported("only 1-D and 2-D convolutions (of known rank) run on Vulkan");
  if (q.inputRank(0) >= 0 && q.inputRank(0) != rank) return unsupported("X and W ranks differ");
  if (q.node.attrInt("group", 1) < 1) return unsupported("group must be positive");
  const std::string autoPad = q.node.attrString("auto_pad", "NOTSET");
  if (!autoPad.empty() && autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER") {
    return unsupported("unknown auto_pad '" + autoPad + "'");
  }
  if (!transposed && !readActivation(q.node)) return unsupported("unknown kiln_activation");
  return supported();
}

}  // namespace

void registerConvKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Conv", 1, 1 << 30, [](const SupportQuery& q) { return checkConvLike(q, false); },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new ConvKernel(info, *readActivation(info.node)));
                 }});
  out.push_back({"ConvTranspose", 1, 1 << 30, [](const SupportQuery& q) { return checkConvLike(q, true); },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new ConvTransposeKernel(info));
                 }});
}

}  // namespace kiln::vk
