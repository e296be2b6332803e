#include "ep/vulkan/qdq_fusions.h"

#include "ops/qdq_drop.h"

namespace kiln::vk {

int dropQdqAroundDataMovement(ir::Graph& graph, const std::vector<std::string>& keep, bool moveBytes,
                              int64_t opset) {
  ops::QdqDropPolicy policy;
  policy.keep = keep;
  policy.moveBytes = moveBytes;
  policy.opset = opset;
  return static_cast<int>(ops::dropExactQdqPairs(graph, policy));
}

}  // namespace kiln::vk
