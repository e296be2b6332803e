// GraphExecutor's memory plan: at creation, the buffers the first run will take from the pool are reserved and
// their pages mapped, from the shapes inference fixed. The plan replays a run's allocation order (each step's
// outputs taken, the slots whose last reader it is released) on the BufferPool, so the first run is served from the
// pool like any later one and pays no page faults; the peak is the run's own. Values without a static shape and
// type are left out (the run allocates them as before), and so are outputs that are views of an input.
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <new>
#include <unordered_set>

#include "ep/cpu/graph_executor.h"
#include "kiln/tensor_size.h"

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

// The most bytes a plan may reserve in all: half the machine's memory. A bigger one (or one value over the session's
// tensor limit) means no plan: inference can fix shapes no run could fill (a hostile model, a huge Resize), and
// creation must not die of them; the run then allocates, and refuses, as it would without a plan.
uint64_t planBudgetBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 2
                                   : kDefaultMaxTensorBytes;
}

}  // namespace

size_t GraphExecutor::planMemory(uint64_t maxTensorBytes) {
  std::vector<const ir::ValueInfo*> infos(frame_.size(), nullptr);
  for (const auto& [name, slot] : slots_) infos[static_cast<size_t>(slot)] = graph_->findValueInfo(name);
  // First the sizes alone: every planned value within the tensor limit, the run's peak within the budget.
  std::vector<uint64_t> liveBytes(frame_.size(), 0);
  uint64_t live = 0, peak = 0;
  bool fits = true;
  replayAllocations(
      [&](int slot) {
        auto tensor = staticTensor(infos[static_cast<size_t>(slot)]);
        if (!tensor || !fits) return;
        auto bytes = checkedTensorBytes(tensor->first, tensor->second, maxTensorBytes, "a planned value");
        fits = bytes.isOk();
        if (!fits) return;
        liveBytes[static_cast<size_t>(slot)] = *bytes;
        live += *bytes;
        peak = std::max(peak, live);
      },
      [&](int slot) {
        live -= liveBytes[static_cast<size_t>(slot)];
        liveBytes[static_cast<size_t>(slot)] = 0;
      });
  if (!fits || peak > planBudgetBytes()) return 0;
  std::vector<Tensor> held(frame_.size());
  size_t planned = 0;
  try {
    replayAllocations(
        [&](int slot) {
          auto tensor = staticTensor(infos[static_cast<size_t>(slot)]);
          if (!tensor) return;
          held[static_cast<size_t>(slot)] = bufferPool_->allocate(tensor->first, tensor->second);
          ++planned;
        },
        [&](int slot) { held[static_cast<size_t>(slot)] = Tensor(); });
  } catch (const std::bad_alloc&) {
    return 0;  // the buffers reserved so far return to the pool; the run allocates the rest itself
  }
  held.clear();  // the run's outputs and everything else return to the pool
  bufferPool_->mapPooledPages(threadPool_.get());
  return planned;
}

// Replays a run's use of the pool in step order: `take` for the slot of every output the run allocates, `release`
// for every slot whose last reader the step is.
void GraphExecutor::replayAllocations(const std::function<void(int slot)>& take,
                                      const std::function<void(int slot)>& release) const {
  for (const Step& step : steps_) {
    // A fused follower is skipped when its anchor applies the chain (the usual case): it takes nothing.
    // A partition's kernel (another EP's) hands over its own tensors: nothing to reserve for it either.
    if (step.fusedInto < 0 && !step.external && !outputIsView(*step.node)) {
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        // An anchor's output 0 is the chain's result, stored in the chain's output slot.
        const int slot = step.epilogue && i == 0 ? step.epilogueOutput : step.outputs[i];
        if (slot >= 0 && !pinned_[static_cast<size_t>(slot)]) take(slot);
      }
    }
    for (int slot : step.release) release(slot);
  }
}

}  // namespace kiln::cpu
