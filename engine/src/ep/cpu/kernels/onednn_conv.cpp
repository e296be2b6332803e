// oneDNN float convolution (see onednn_conv.h). oneDNN's C++ API reports failures by throwing dnnl::error: every call
// into it is wrapped here and a failure means "not handled", so the kernel falls back to the reference path and Kiln
// itself never throws.
#include "ep/cpu/kernels/onednn_conv.h"

#include "ep/cpu/kernels/onednn_common.h"

#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using namespace onednn;  // NOLINT: the shared helpers read as this file's own

}  // namespace

struct OneDnnFloatConv::State {
  int64_t group = 1, M = 0, Mg = 0, Cg = 0;
  size_t spatialRank = 0;
  Tensor weights;          // the constant w (shared storage)
  memory::desc plainDesc;  // w as [G, Mg, Cg, kernel...]

  struct PackedWeights {
    memory::desc desc;
    memory data;
  };
  std::vector<PackedWeights> packs;

  struct Plan {
    Shape xShape;
    bool hasBias = false;
    bool usable = false;
    dnnl::convolution_forward conv;
    memory::desc src, dst, bias;  // Kiln's plain layouts
    memory weights;
  };
  std::mutex mutex;
  std::vector<std::shared_ptr<Plan>> plans;
  std::string lastImplementation;

  // The weights in `desc`'s layout, reordered from the plain constant the first time that layout is asked for.
  const memory& packedFor(const memory::desc& desc, const dnnl::engine& engine);
  // The plan for x's shape with geometry g, created (and its weights packed) on first use.
  std::shared_ptr<Plan> planFor(const Shape& xShape, bool hasBias, const ops::WindowGeometry& g);
};

const memory& OneDnnFloatConv::State::packedFor(const memory::desc& desc, const dnnl::engine& engine) {
  for (const PackedWeights& p : packs) {
    if (p.desc == desc) return p.data;
  }
  memory plain(plainDesc, engine, const_cast<void*>(weights.rawData()));
  memory packed(desc, engine);
  dnnl::stream stream(engine);
  dnnl::reorder(plain, packed).execute(stream, plain, packed);
  stream.wait();
  packs.push_back({desc, packed});
  return packs.back().data;
}

std::shared_ptr<OneDnnFloatConv::State::Plan> OneDnnFloatConv::State::planFor(const Shape& xShape, bool hasBias,
                                                                               const ops::WindowGeometry& g) {
  std::lock_guard lock(mutex);
  for (const auto& p : plans) {
    if (p->xShape == xShape && p->hasBias == hasBias) return p;
  }
  auto plan = std::make_shared<Plan>();
  plan->xShape = xShape;
  plan->hasBias = hasBias;
  try {
    const dnnl::engine& engine = *cpuEngine();
    const size_t R = g.rank();
    memory::dims src{xShape[0], xShape[1]}, dst{xShape[0], M}, wei{group, Mg, Cg}, strides, dilates, padL, padR;
    for (size_t d = 0; d < R; ++d) {
      src.push_back(g.in[d]);
      dst.push_back(g.out[d]);
      wei.push_back(g.kernel[d]);
      strides.push_back(g.strides[d]);
      dilates.push_back(g.dilations[d] - 1);
      padL.push_back(g.padBegin[d]);
      padR.push_back(g.padEnd[d]);
    }
    plan->src = memory::desc(src, memory::data_type::f32, plainActivationTag(R));
    plan->dst = memory::desc(dst, memory::data_type::f32, plainActivationTag(R));
    plan->bias = hasBias ? memory::desc({M}, memory::data_type::f32, memory::format_tag::x) : memory::desc();
    const memory::desc anyWeights(wei, memory::data_type::f32, memory::format_tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         plan->src, anyWeights, plan->bias, plan->dst, strides, dilates, padL, padR);
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    lastImplementation = pd.impl_info_str();
    // oneDNN's reference implementations are correct but slower than the OpenBLAS path: such shapes stay there.
    if (!isReferenceImplementation(lastImplementation)) {
      plan->weights = packedFor(pd.weights_desc(), engine);
      plan->conv = dnnl::convolution_forward(pd);
      plan->usable = true;
    }
  } catch (const dnnl::error& e) {
    lastImplementation = std::string("unavailable: ") + e.what();
    plan->usable = false;
  }
  rememberPlan(plans, plan);
  return plan;
}

OneDnnFloatConv::OneDnnFloatConv(std::unique_ptr<State> state) : state_(std::move(state)) {}
OneDnnFloatConv::~OneDnnFloatConv() = default;

std::unique_ptr<OneDnnFloatConv> OneDnnFloatConv::create(int64_t group, const Tensor& w) {
  if (!cpuEngine() || w.dtype() != DataType::FLOAT || w.rank() < 3 || w.rank() > 5 || group <= 0 ||
      w.dim(0) % group != 0 || w.numel() == 0) {
    return nullptr;
  }
  auto state = std::make_unique<State>();
  State& s = *state;
  s.group = group;
  s.M = w.dim(0);
  s.Mg = s.M / group;
  s.Cg = w.dim(1);
  s.spatialRank = w.rank() - 2;
  s.weights = w;
  try {
    memory::dims wei{group, s.Mg, s.Cg};
    wei.insert(wei.end(), w.shape().begin() + 2, w.shape().end());
    s.plainDesc = memory::desc(wei, memory::data_type::f32, plainWeightsTag(s.spatialRank));
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<OneDnnFloatConv>(new OneDnnFloatConv(std::move(state)));
}

std::string OneDnnFloatConv::implementation() const {
  std::lock_guard lock(state_->mutex);
  return state_->lastImplementation;
}

bool OneDnnFloatConv::run(const float* x, const float* bias, const ConvShapes& s, float* y, ThreadPool* pool) {
  State& st = *state_;
  if (s.M != st.M || s.C != st.Cg * st.group || s.geometry.rank() != st.spatialRank) return false;
  if (s.N == 0 || s.geometry.outSize() == 0 || s.geometry.inSize() == 0) return false;
  Shape xShape{s.N, s.C};
  xShape.insert(xShape.end(), s.geometry.in.begin(), s.geometry.in.begin() + static_cast<int64_t>(st.spatialRank));
  std::shared_ptr<State::Plan> plan = st.planFor(xShape, bias != nullptr, s.geometry);
  if (!plan->usable) return false;
  try {
    const dnnl::engine& engine = *cpuEngine();
    dnnl::stream stream(engine);
    memory src(plan->src, engine, const_cast<float*>(x));
    memory dst(plan->dst, engine, y);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, plan->weights}, {DNNL_ARG_DST, dst}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(plan->bias, engine, const_cast<float*>(bias)));
    const int64_t macs = s.N * s.M * s.geometry.outSize() * st.Cg * s.geometry.kernelSize();
    setThreads(pool, macs);
    plan->conv.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

}  // namespace kiln::cpu
