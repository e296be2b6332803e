// GraphExecutor's memory plan: at creation, the buffers the first run will take from the pool are reserved and
// their pages mapped, from the shapes inference fixed. The plan replays a run's allocation order (each step's
// outputs taken, the slots whose last reader it is released) on the BufferPool, so the first run is served from the
// pool like any later one and pays no page faults; the peak is the run's own. Values without a static shape and
// type are left out (the run allocates them as before), and so are outputs that are views of an input.
#include <unordered_set>

#include "ep/cpu/graph_executor.h"

namespace kiln::cpu {
namespace {

// Ops whose CPU kernels return a view of their input or a tensor they hold (shape.cpp, tensor.cpp; Dropout at
// inference): nothing of their own to reserve.
bool outputIsView(const ir::Node& node) {
  static const std::unordered_set<std::string> kViews = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                                         "Dropout", "Constant"};
  return node.domain.empty() && kViews.count(node.opType) != 0;
}

// The static shape of a tensor value with a known element type, or nullopt.
std::optional<std::pair<DataType, Shape>> staticTensor(const ir::ValueInfo* info) {
  if (!info || info->kind != ValueKind::TENSOR || !info->shape || info->dtype == DataType::UNDEFINED ||
      info->dtype == DataType::STRING) {
    return std::nullopt;
  }
  Shape shape;
  for (const Dimension& d : *info->shape) {
    if (!d.isFixed()) return std::nullopt;
    shape.push_back(d.value);
  }
  return std::make_pair(info->dtype, std::move(shape));
}

}  // namespace

size_t GraphExecutor::planMemory() {
  std::vector<const ir::ValueInfo*> infos(frame_.size(), nullptr);
  for (const auto& [name, slot] : slots_) infos[static_cast<size_t>(slot)] = graph_->findValueInfo(name);
  std::vector<Tensor> live(frame_.size());
  size_t planned = 0;
  auto reserve = [&](int slot) {
    if (slot < 0 || pinned_[static_cast<size_t>(slot)]) return;
    auto tensor = staticTensor(infos[static_cast<size_t>(slot)]);
    if (!tensor) return;
    live[static_cast<size_t>(slot)] = bufferPool_->allocate(tensor->first, tensor->second);
    ++planned;
  };
  for (const Step& step : steps_) {
    // A fused follower is skipped when its anchor applies the chain (the usual case): it takes nothing.
    // A partition's kernel (another EP's) hands over its own tensors: nothing to reserve for it either.
    if (step.fusedInto < 0 && !step.external && !outputIsView(*step.node)) {
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        // An anchor's output 0 is the chain's result, stored in the chain's output slot.
        reserve(step.epilogue && i == 0 ? step.epilogueOutput : step.outputs[i]);
      }
    }
    for (int slot : step.release) live[static_cast<size_t>(slot)] = Tensor();
  }
  live.clear();  // the run's outputs and everything else return to the pool
  bufferPool_->mapPooledPages(threadPool_.get());
  return planned;
}

}  // namespace kiln::cpu
