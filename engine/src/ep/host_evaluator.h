// Host evaluation of single nodes, for an EP that computes small integer tensors (shapes, axes, indices) on the host
// inside its partitions instead of splitting them, as ONNX Runtime's GPU EPs place shape subgraphs on the CPU. The
// session hands the CPU EP's kernels to such an EP through this interface, so execution providers never include
// each other.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// One node, prepared for evaluation on the host (attributes and constant inputs read once).
class HostNode {
 public:
  virtual ~HostNode() = default;
  // Computes the node: `inputs` in node-input order (nullptr where omitted); `outputs` has one slot per node output.
  virtual Status compute(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) = 0;
};

class HostEvaluator {
 public:
  virtual ~HostEvaluator() = default;
  // Whether the host can evaluate op `opType` of `domain` at `opset`.
  virtual bool canEvaluate(const std::string& domain, const std::string& opType, int64_t opset) const = 0;
  // Prepares `node` at `opset`; `constantInputs` by input index (nullptr where the input is not constant or absent).
  // NOT_IMPLEMENTED when the host cannot evaluate it.
  virtual Result<std::unique_ptr<HostNode>> prepare(const ir::Node& node, int64_t opset,
                                                    std::vector<const Tensor*> constantInputs) const = 0;
};

}  // namespace kiln
