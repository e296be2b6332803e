// Vulkan kernels: ops that only change the shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at
// inference). They record nothing: the output is a view of the input's storage.
#include <algorithm>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

// Output shape from the input shape and the node's host parameters.
using ShapeRule = std::function<Result<Shape>(const RecordContext&, const Shape&)>;

class ViewKernel final : public VkKernel {
 public:
  explicit ViewKernel(ShapeRule rule) : rule_(std::move(rule)) {}
  Status record(RecordContext& ctx) override {
    const VkTensor* x = ctx.input(0);
    if (!x) return Status(StatusCode::INVALID_ARGUMENT, "missing data input");
    KILN_ASSIGN_OR_RETURN(Shape shape, rule_(ctx, x->shape));
    return ctx.aliasOutput(0, 0, std::move(shape));
  }

 private:
  ShapeRule rule_;
};

Result<Shape> reshapeRule(const RecordContext& ctx, const Shape& in, bool allowZero) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> target, hostInts(ctx.input(1), "Reshape's shape"));
  Shape out(target.size());
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= in.size()) return Status(StatusCode::INVALID_ARGUMENT, "Reshape copies a dimension the input lacks");
      out[i] = in[i];
    } else if (target[i] == -1) {
      if (inferred >= 0) return Status(StatusCode::INVALID_ARGUMENT, "Reshape has more than one -1");
      inferred = static_cast<int>(i);
      continue;
    } else {
      out[i] = target[i];
    }
    known *= out[i];
  }
  if (inferred >= 0) out[static_cast<size_t>(inferred)] = known == 0 ? 0 : shapeSize(in) / known;
  if (shapeSize(out) != shapeSize(in)) {
    return Status(StatusCode::INVALID_ARGUMENT, "cannot reshape " + shapeToString(in) + " to " + shapeToString(out));
  }
  return out;
}

Result<std::vector<int64_t>> axesOf(const RecordContext& ctx, const ir::Node& node, int64_t opset) {
  if (opset >= 13) {
    if (!ctx.input(1)) return std::vector<int64_t>{};
    return hostInts(ctx.input(1), "axes");
  }
  return node.attrInts("axes");
}

KernelEntry view(const char* op, int64_t since, std::function<ShapeRule(const KernelCreateInfo&)> makeRule,
                 SupportCheck check = nullptr) {
  // Float16 data is left to the CPU EP on devices without 16-bit storage, as every kernel that could read it is.
  auto checked = [check](const SupportQuery& q) {
    if (q.inputType(0) == DataType::FLOAT16 && !deviceStoresFloat16(q.device)) {
      return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks");
    }
    return check ? check(q) : supported();
  };
  return {op, since, 1 << 30, checked,
          [makeRule](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
            return std::unique_ptr<VkKernel>(new ViewKernel(makeRule(info)));
          }};
}

}  // namespace

void registerViewKernels(std::vector<KernelEntry>& out) {
  out.push_back(view("Reshape", 5, [](const KernelCreateInfo& info) -> ShapeRule {
    const bool allowZero = info.node.attrInt("allowzero", 0) != 0;
    return [allowZero](const RecordContext& ctx, const Shape& in) { return reshapeRule(ctx, in, allowZero); };
  }, [](const SupportQuery& q) { return requireHostInput(q, 1, "the target shape"); }));

  out.push_back(view("Flatten", 1, [](const KernelCreateInfo& info) -> ShapeRule {
    const int64_t axisAttr = info.node.attrInt("axis", 1);
    return [axisAttr](const RecordContext&, const Shape& in) -> Result<Shape> {
      const int64_t rank = static_cast<int64_t>(in.size());
      const int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
      if (axis < 0 || axis > rank) return Status(StatusCode::INVALID_ARGUMENT, "Flatten axis out of range");
      // Both products in full: with an empty dim before the axis, numel / outer would lose the inner extent.
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[static_cast<size_t>(i)];
      return Shape{outer, inner};
    };
  }));

  out.push_back(view("Squeeze", 1, [](const KernelCreateInfo& info) -> ShapeRule {
    const ir::Node* node = &info.node;
    const int64_t opset = info.opset;
    return [node, opset](const RecordContext& ctx, const Shape& in) -> Result<Shape> {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesOf(ctx, *node, opset));
      const int64_t rank = static_cast<int64_t>(in.size());
      std::vector<bool> drop(in.size(), false);
      for (int64_t a : axes) {
        KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank, "Squeeze axis"));
        if (in[static_cast<size_t>(axis)] != 1) {
          return Status(StatusCode::INVALID_ARGUMENT, "Squeeze axis " + std::to_string(a) + " has size " +
                                                          std::to_string(in[static_cast<size_t>(axis)]));
        }
        drop[static_cast<size_t>(axis)] = true;
      }
      Shape out;
      for (size_t i = 0; i < in.size(); ++i) {
        if (axes.empty() ? in[i] != 1 : !drop[i]) out.push_back(in[i]);
      }
      return out;
    };
  }, [](const SupportQuery& q) { return q.opset >= 13 ? requireHostInput(q, 1, "the axes") : supported(); }));

  out.push_back(view("Unsqueeze", 1, [](const KernelCreateInfo& info) -> ShapeRule {
    const ir::Node* node = &info.node;
    const int64_t opset = info.opset;
    return [node, opset](const RecordContext& ctx, const Shape& in) -> Result<Shape> {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axesOf(ctx, *node, opset));
      const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
      std::vector<bool> inserted(static_cast<size_t>(rank), false);
      for (int64_t a : axes) {
        KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank, "Unsqueeze axis"));
        if (inserted[static_cast<size_t>(axis)]) return Status(StatusCode::INVALID_ARGUMENT, "Unsqueeze axes repeat");
        inserted[static_cast<size_t>(axis)] = true;
      }
      Shape out;
      size_t next = 0;
      for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[static_cast<size_t>(i)] ? 1 : in[next++]);
      return out;
    };
  }, [](const SupportQuery& q) { return q.opset >= 13 ? requireHostInput(q, 1, "the axes") : supported(); }));

  auto identity = [](const KernelCreateInfo&) -> ShapeRule {
    return [](const RecordContext&, const Shape& in) -> Result<Shape> { return in; };
  };
  // Only tensors: sequence and optional values have no device form.
  out.push_back(view("Identity", 1, identity, [](const SupportQuery& q) {
    const ir::ValueInfo* info = q.inputInfo.empty() ? nullptr : q.inputInfo[0];
    if (q.constantInputs.empty() || !q.constantInputs[0]) {
      if (!info || info->kind != ir::ValueKind::TENSOR || info->dtype == DataType::UNDEFINED) {
        return unsupported("the input is not a tensor of known type");
      }
    }
    return supported();
  }));
  // Dropout at inference is the identity; the optional mask output is not produced here.
  out.push_back(view("Dropout", 1, identity, [](const SupportQuery& q) {
    if (q.node.outputs.size() > 1 && !q.node.outputs[1].empty()) return unsupported("Dropout's mask output is used");
    // Inference only: training_mode must be absent or a constant false.
    if (q.hasInput(2)) {
      const Tensor* mode = q.constantInputs.size() > 2 ? q.constantInputs[2] : nullptr;
      if (!mode || mode->dtype() != DataType::BOOL || mode->numel() != 1 || mode->data<bool>()[0]) {
        return unsupported("training_mode may be true (the Vulkan kernel is the inference identity)");
      }
    }
    return supported();
  }));
}

}  // namespace kiln::vk
