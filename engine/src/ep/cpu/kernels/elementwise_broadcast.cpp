// Broadcast planning for the elementwise family: merges dims with the same broadcast pattern so the
// inner loop runs over as many contiguous elements as possible.
#include <algorithm>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu::elementwise {

Result<BroadcastPlan> planBroadcast(std::initializer_list<const Shape*> inputs, const Shape& outShape) {
  BroadcastPlan plan;
  plan.inputCount = inputs.size();
  if (plan.inputCount == 0 || plan.inputCount > BroadcastPlan::kMaxInputs) {
    return invalidArgument("broadcast of " + std::to_string(plan.inputCount) + " inputs is not supported");
  }
  const size_t rank = outShape.size();
  // Per output dim (size > 1 only): its size and a bit mask of the inputs that repeat along it.
  std::vector<int64_t> dims;
  std::vector<unsigned> masks;
  for (size_t d = 0; d < rank; ++d) {
    unsigned mask = 0;
    size_t k = 0;
    for (const Shape* shape : inputs) {
      if (shape->size() > rank) {
        return invalidArgument("shape " + shapeToString(*shape) + " has more dims than " + shapeToString(outShape));
      }
      const size_t pad = rank - shape->size();
      const int64_t dim = d < pad ? 1 : (*shape)[d - pad];
      if (dim != outShape[d]) {
        if (dim != 1) {
          return invalidArgument("shape " + shapeToString(*shape) + " does not broadcast to " +
                                 shapeToString(outShape));
        }
        mask |= 1u << k;
      }
      ++k;
    }
    if (outShape[d] == 1) continue;
    if (!dims.empty() && masks.back() == mask) {
      dims.back() *= outShape[d];
    } else {
      dims.push_back(outShape[d]);
      masks.push_back(mask);
    }
  }
  const int64_t total = shapeSize(outShape);
  if (total == 0) return plan;  // runs = 0: nothing to do
  if (dims.empty()) {           // every input is a single element
    plan.runs = 1;
    return plan;
  }
  plan.inner = dims.back();
  plan.runs = total / plan.inner;
  plan.outer.assign(dims.begin(), dims.end() - 1);
  for (size_t k = 0; k < plan.inputCount; ++k) {
    const bool repeated = (masks.back() >> k) & 1u;
    plan.step[k] = repeated ? 0 : 1;
    // Element strides of input k along the merged dims: contiguous over the dims it does not repeat on.
    std::vector<int64_t>& strides = plan.strides[k];
    strides.assign(plan.outer.size(), 0);
    int64_t stride = repeated ? 1 : plan.inner;
    for (size_t d = plan.outer.size(); d-- > 0;) {
      if ((masks[d] >> k) & 1u) continue;
      strides[d] = stride;
      stride *= plan.outer[d];
    }
  }
  return plan;
}

Result<Shape> broadcastAll(const std::vector<const Shape*>& shapes) {
  if (shapes.empty()) return invalidArgument("no inputs to broadcast");
  Shape out = *shapes.front();
  for (size_t i = 1; i < shapes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(out, broadcastShapes(out, *shapes[i]));
  }
  return out;
}

LegacyBroadcast LegacyBroadcast::fromNode(const ir::Node& node, int64_t opset) {
  LegacyBroadcast legacy;
  legacy.enabled = opset < 7 && node.attrInt("broadcast", 0) != 0;
  legacy.hasAxis = node.hasAttribute("axis");
  legacy.axis = node.attrInt("axis", 0);
  return legacy;
}

Result<Shape> LegacyBroadcast::alignB(const Shape& a, const Shape& b) const {
  if (!enabled) return b;
  const int64_t rankA = static_cast<int64_t>(a.size()), rankB = static_cast<int64_t>(b.size());
  int64_t start = hasAxis ? axis : rankA - rankB;
  if (start < 0) start += rankA;
  if (rankB > rankA || start < 0 || start + rankB > rankA) {
    return invalidArgument("legacy broadcast (axis " + std::to_string(start) + ") cannot fit shape " +
                           shapeToString(b) + " into " + shapeToString(a));
  }
  Shape aligned = b;  // trailing ones keep B at `start` once right-aligned against A
  aligned.resize(static_cast<size_t>(rankA - start), 1);
  return aligned;
}

}  // namespace kiln::cpu::elementwise
