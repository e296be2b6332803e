// NonMaxSuppression (opsets 10 and 11, the same semantics): greedy per-(batch, class) box selection. Output
// selected_indices is int64 [num_selected, 3] of [batch, class, box], its size known only after selection.
//
// Follows the ONNX reference and onnxruntime: candidates are the boxes whose score is strictly above
// score_threshold (all boxes when the input is absent), visited by descending score with ties by ascending
// box index; a candidate is kept unless its IoU with an already kept box of the same class is strictly above
// iou_threshold, until max_output_boxes_per_class are kept (absent or <= 0: none). Rows are ordered by batch,
// then class, then selection order. IoU is computed in float; boxes with zero area never suppress. Boxes are
// [y1, x1, y2, x2] with any corner order (center_point_box = 0) or [x_center, y_center, width, height] (1).
// NaN scores are never selected (they have no place in the score order).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

struct Corners {
  float xMin = 0, yMin = 0, xMax = 0, yMax = 0;
};

Corners cornersOf(const float* box, bool centerPoint) {
  if (centerPoint) {
    const float halfW = box[2] / 2, halfH = box[3] / 2;
    return {box[0] - halfW, box[1] - halfH, box[0] + halfW, box[1] + halfH};
  }
  return {std::min(box[1], box[3]), std::min(box[0], box[2]), std::max(box[1], box[3]),
          std::max(box[0], box[2])};
}

bool suppresses(const Corners& a, const Corners& b, float iouThreshold) {
  const float xMin = std::max(a.xMin, b.xMin), xMax = std::min(a.xMax, b.xMax);
  if (xMax <= xMin) return false;
  const float yMin = std::max(a.yMin, b.yMin), yMax = std::min(a.yMax, b.yMax);
  if (yMax <= yMin) return false;
  const float intersection = (xMax - xMin) * (yMax - yMin);
  if (intersection <= 0.0f) return false;
  const float areaA = (a.xMax - a.xMin) * (a.yMax - a.yMin);
  const float areaB = (b.xMax - b.xMin) * (b.yMax - b.yMin);
  const float unionArea = areaA + areaB - intersection;
  if (areaA <= 0.0f || areaB <= 0.0f || unionArea <= 0.0f) return false;
  return intersection / unionArea > iouThreshold;
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInfo& info)
      : label_(info.node.opType), centerPointBox_(info.node.attrInt("center_point_box", 0)) {}

  Status init() const {
    if (centerPointBox_ != 0 && centerPointBox_ != 1) {
      return nodeError(label_, "center_point_box must be 0 or 1, got " + std::to_string(centerPointBox_));
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* boxes = ctx.input(0);
    const Tensor* scores = ctx.input(1);
    if (!boxes || !scores) return nodeError(label_, "needs inputs 'boxes' and 'scores'");
    if (boxes->dtype() != DataType::FLOAT || scores->dtype() != DataType::FLOAT) {
      return nodeError(label_, "boxes and scores must be float");
    }
    if (boxes->rank() != 3 || boxes->dim(2) != 4 || scores->rank() != 3 || scores->dim(0) != boxes->dim(0) ||
        scores->dim(2) != boxes->dim(1)) {
      return nodeError(label_,
                       "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " +
                           shapeToString(boxes->shape()) + " and " + shapeToString(scores->shape()));
    }
    int64_t maxPerClass = 0;
    if (ctx.hasInput(2) && ctx.input(2)->numel() > 0) {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                            readIndexInput(label_, *ctx.input(2), "input 'max_output_boxes_per_class'"));
      if (values.size() != 1) return nodeError(label_, "max_output_boxes_per_class must be a scalar");
      maxPerClass = std::max<int64_t>(values[0], 0);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<float> iou, readFloatScalar(ctx, 3, "iou_threshold"));
    KILN_ASSIGN_OR_RETURN(std::vector<float> scoreThreshold, readFloatScalar(ctx, 4, "score_threshold"));
    const float iouThreshold = iou.empty() ? 0.0f : iou[0];
    if (!(iouThreshold >= 0.0f && iouThreshold <= 1.0f)) {
      return nodeError(label_, "iou_threshold must be in [0, 1], got " + std::to_string(iouThreshold));
    }
    const int64_t batches = boxes->dim(0), numBoxes = boxes->dim(1), classes = scores->dim(1);
    const float* boxData = boxes->data<float>();
    const float* scoreData = scores->data<float>();
    std::vector<int64_t> selected;  // flattened [batch, class, box] rows
    std::vector<Corners> corners(static_cast<size_t>(numBoxes));
    std::vector<int64_t> candidates;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches && maxPerClass > 0; ++b) {
      for (int64_t i = 0; i < numBoxes; ++i) {
        corners[static_cast<size_t>(i)] = cornersOf(boxData + (b * numBoxes + i) * 4, centerPointBox_ == 1);
      }
      for (int64_t c = 0; c < classes; ++c) {
        const float* classScores = scoreData + (b * classes + c) * numBoxes;
        candidates.clear();
        for (int64_t i = 0; i < numBoxes; ++i) {
          const float score = classScores[i];
          if (!std::isnan(score) && (scoreThreshold.empty() || score > scoreThreshold[0]))
            candidates.push_back(i);
        }
        std::stable_sort(candidates.begin(), candidates.end(),
                         [&](int64_t l, int64_t r) { return classScores[l] > classScores[r]; });
        kept.clear();
        for (int64_t candidate : candidates) {
          if (static_cast<int64_t>(kept.size()) >= maxPerClass) break;
          const Corners& box = corners[static_cast<size_t>(candidate)];
          const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
            return suppresses(box, corners[static_cast<size_t>(k)], iouThreshold);
          });
          if (suppressed) continue;
          kept.push_back(candidate);
          selected.insert(selected.end(), {b, c, candidate});
        }
      }
    }
    const int64_t rows = static_cast<int64_t>(selected.size() / 3);
    Tensor& out = ctx.allocateOutput(0, DataType::INT64, {rows, 3});
    std::copy(selected.begin(), selected.end(), out.data<int64_t>());
    return Status::ok();
  }

 private:
  // An optional float scalar input: empty when absent (or given as an empty tensor).
  Result<std::vector<float>> readFloatScalar(const KernelContext& ctx, size_t index, const char* name) const {
    const Tensor* tensor = ctx.input(index);
    if (!tensor || tensor->numel() == 0) return std::vector<float>{};
    if (tensor->dtype() != DataType::FLOAT || tensor->numel() != 1) {
      return nodeError(label_, std::string(name) + " must be a float scalar, got " +
                                   dataTypeName(tensor->dtype()) + " " + shapeToString(tensor->shape()));
    }
    return std::vector<float>{tensor->data<float>()[0]};
  }

  std::string label_;
  int64_t centerPointBox_;
};

Result<std::unique_ptr<Kernel>> createNonMaxSuppression(const KernelInfo& info) {
  auto kernel = std::make_unique<NonMaxSuppressionKernel>(info);
  KILN_RETURN_IF_ERROR(kernel->init());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerNonMaxSuppressionKernels(KernelRegistry& registry) {
  registry.add("NonMaxSuppression", 10, kAnyOpset, createNonMaxSuppression);
}

}  // namespace kiln::cpu
