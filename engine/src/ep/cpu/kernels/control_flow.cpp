// Control flow: If, Loop and Scan. Each body runs through a SubgraphExecutor built once per kernel; values the
// body reads from enclosing scopes are resolved by the executor. If outputs and Loop-carried values may be
// sequences or optionals (kiln::Value); Loop scan outputs and all Scan values are tensors, as the spec says.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

namespace {

// Declared element type and shape of a body output, used to shape empty scan outputs (zero iterations).
struct BodyOutputType {
  DataType dtype = DataType::FLOAT;
  Shape shape;  // fixed dims only; unknown dims become 0 (the output is empty either way)
};

struct Body {
  std::unique_ptr<SubgraphExecutor> executor;
  size_t inputCount = 0;
  std::vector<BodyOutputType> outputs;
};

// Builds the executor for subgraph attribute `key`; unless `allowValues`, rejects non-tensor body values.
Result<Body> makeBody(const KernelInfo& info, const char* key, bool allowValues = false) {
  const std::string label = info.node.label();
  const ir::Graph* graph = info.node.subgraph(key);
  if (!graph) return invalidArgument(label + ": missing graph attribute '" + key + "'");
  if (!info.createSubgraphExecutor) return notImplemented(label + ": this session cannot run subgraphs");
  auto notTensor = [allowValues](const ir::ValueInfo& v) {
    return v.kind == ir::ValueKind::MAP ||
           (!allowValues && (v.kind == ir::ValueKind::SEQUENCE || v.kind == ir::ValueKind::OPTIONAL));
  };
  for (const auto* list : {&graph->inputs, &graph->outputs}) {
    for (const ir::ValueInfo& value : *list) {
      if (notTensor(value)) {
        return notImplemented(label + ": body value '" + value.name +
                              "' is a " + valueKindName(value.kind) + ", which this op cannot carry");
      }
    }
  }
  Body body;
  KILN_ASSIGN_OR_RETURN(body.executor, info.createSubgraphExecutor(*graph));
  body.inputCount = graph->inputs.size();
  for (const ir::ValueInfo& value : graph->outputs) {
    BodyOutputType type;
    if (value.dtype != DataType::UNDEFINED) type.dtype = value.dtype;
    if (value.shape) {
      for (const Dimension& d : *value.shape) type.shape.push_back(d.isFixed() ? d.value : 0);
    }
    body.outputs.push_back(std::move(type));
  }
  return body;
}

Result<bool> readCondition(const std::string& label, const Tensor& tensor, const char* what) {
  if (tensor.numel() != 1) return invalidArgument(label + ": " + what + " must have exactly one element");
  if (tensor.dtype() == DataType::BOOL) return *tensor.data<bool>();
  KILN_ASSIGN_OR_RETURN(auto values, readDoubleValues(tensor));
  return values[0] != 0.0;
}

// The sub-tensor at `index` along `axis`, with that axis removed.
Tensor sliceAxis(const Tensor& input, size_t axis, int64_t index) {
  Shape shape = input.shape();
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t length = shape[axis];
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(input.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o) copyElements(input, (o * length + index) * inner, out, o * inner, inner);
  return out;
}

// Stacks equally shaped `slices` along a new `axis` (slice t goes to position `positions[t]`).
Result<Tensor> stackAxis(const std::string& label, const std::vector<Tensor>& slices,
                         const std::vector<int64_t>& positions, int64_t axis, const BodyOutputType& emptyType) {
  const int64_t count = static_cast<int64_t>(slices.size());
  if (count == 0) {
    Shape shape = emptyType.shape;
    const int64_t a = std::clamp<int64_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) + 1 : axis, 0,
                                          static_cast<int64_t>(shape.size()));
    shape.insert(shape.begin() + a, 0);
    return Tensor(emptyType.dtype, shape);
  }
  const Tensor& first = slices[0];
  for (const Tensor& s : slices) {
    if (s.dtype() != first.dtype() || s.shape() != first.shape()) {
      return invalidArgument(label + ": scan output changes shape or type between iterations (" +
                             shapeToString(first.shape()) + " vs " + shapeToString(s.shape()) + ")");
    }
  }
  KILN_ASSIGN_OR_RETURN(int64_t a, normalizeAxis(axis, static_cast<int64_t>(first.rank()) + 1));
  Shape shape = first.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(a); d < shape.size(); ++d) inner *= shape[d];
  shape.insert(shape.begin() + a, count);
  Tensor out(first.dtype(), shape);
  for (int64_t t = 0; t < count; ++t) {
    for (int64_t o = 0; o < outer; ++o) {
      copyElements(slices[t], o * inner, out, (o * count + positions[t]) * inner, inner);
    }
  }
  return out;
}

std::vector<int64_t> iterationOrder(int64_t count, bool reverse) {
  std::vector<int64_t> positions(static_cast<size_t>(count));
  for (int64_t t = 0; t < count; ++t) positions[t] = reverse ? count - 1 - t : t;
  return positions;
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const KernelInfo& info) : label_(info.node.label()) {}
  Status init(const KernelInfo& info) {
    KILN_ASSIGN_OR_RETURN(thenBody_, makeBody(info, "then_branch", true));
    KILN_ASSIGN_OR_RETURN(elseBody_, makeBody(info, "else_branch", true));
    return Status::ok();
  }
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing cond input");
    KILN_ASSIGN_OR_RETURN(bool cond, readCondition(label_, *ctx.input(0), "cond"));
    Body& body = cond ? thenBody_ : elseBody_;
    KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, body.executor->runValues({}));
    if (outputs.size() < ctx.outputCount()) {
      return invalidArgument(label_ + ": " + (cond ? "then" : "else") + " branch produced " +
                             std::to_string(outputs.size()) + " outputs, the node has " +
                             std::to_string(ctx.outputCount()));
    }
    for (size_t i = 0; i < ctx.outputCount(); ++i) KILN_RETURN_IF_ERROR(ctx.setOutputValue(i, std::move(outputs[i])));
    return Status::ok();
  }

 private:
  std::string label_;
  Body thenBody_, elseBody_;
};

// Loop: inputs M (optional trip count), cond (optional), N loop-carried values. The body maps
// (iteration, cond, N values) to (cond, N values, K scan slices); outputs are the N final values and the K scan
// outputs stacked along a new first axis.
class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const KernelInfo& info) : label_(info.node.label()) {}
  Status init(const KernelInfo& info) {
    KILN_ASSIGN_OR_RETURN(body_, makeBody(info, "body", true));
    carried_ = info.node.inputs.size() < 2 ? 0 : info.node.inputs.size() - 2;
    if (body_.inputCount != carried_ + 2) {
      return invalidArgument(label_ + ": body takes " + std::to_string(body_.inputCount) + " inputs, expected " +
                             std::to_string(carried_ + 2) + " (iteration, cond, loop-carried values)");
    }
    if (body_.outputs.size() < carried_ + 1) {
      return invalidArgument(label_ + ": body must output cond and " + std::to_string(carried_) + " values");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    int64_t tripCount = std::numeric_limits<int64_t>::max();
    const bool hasTripCount = ctx.hasInput(0), hasCond = ctx.hasInput(1);
    if (hasTripCount) {
      KILN_ASSIGN_OR_RETURN(auto values, readInt64Values(*ctx.input(0)));
      if (values.size() != 1) return invalidArgument(label_ + ": M must have exactly one element");
      tripCount = values[0];
    }
    bool cond = true;
    if (hasCond) {
      KILN_ASSIGN_OR_RETURN(cond, readCondition(label_, *ctx.input(1), "cond"));
    }
    const size_t scanCount = body_.outputs.size() - 1 - carried_;
    std::vector<Value> bodyInputs(2 + carried_);
    for (size_t i = 0; i < carried_; ++i) {
      bodyInputs[2 + i] = ctx.inputValue(2 + i);
      if (!bodyInputs[2 + i].defined()) {
        return invalidArgument(label_ + ": missing loop-carried input " + std::to_string(i));
      }
    }
    std::vector<std::vector<Tensor>> scans(scanCount);
    int64_t iteration = 0;
    for (; iteration < tripCount && cond; ++iteration) {
      bodyInputs[0] = Tensor::fromVector<int64_t>({}, {iteration});
      bodyInputs[1] = Tensor::fromVector<bool>({}, {cond});
      KILN_ASSIGN_OR_RETURN(std::vector<Value> outputs, body_.executor->runValues(bodyInputs));
      if (outputs.size() != body_.outputs.size()) {
        return invalidArgument(label_ + ": body returned " + std::to_string(outputs.size()) + " outputs");
      }
      // Without a cond input the body's cond output is ignored (a for loop), as the spec says.
      if (hasCond) {
        if (!outputs[0].isTensor()) return invalidArgument(label_ + ": the body's cond output must be a tensor");
        KILN_ASSIGN_OR_RETURN(cond, readCondition(label_, outputs[0].tensor(), "body cond output"));
      }
      for (size_t i = 0; i < carried_; ++i) bodyInputs[2 + i] = std::move(outputs[1 + i]);
      for (size_t k = 0; k < scanCount; ++k) {
        const Value& slice = outputs[1 + carried_ + k];
        if (!slice.isTensor()) {
          return invalidArgument(label_ + ": scan output " + std::to_string(k) + " must be a tensor, got " +
                                 slice.describe());
        }
        scans[k].push_back(slice.tensor());
      }
    }
    for (size_t i = 0; i < carried_ && i < ctx.outputCount(); ++i) {
      KILN_RETURN_IF_ERROR(ctx.setOutputValue(i, bodyInputs[2 + i]));
    }
    for (size_t k = 0; k < scanCount && carried_ + k < ctx.outputCount(); ++k) {
      KILN_ASSIGN_OR_RETURN(Tensor stacked, stackAxis(label_, scans[k], iterationOrder(iteration, false), 0,
                                                      body_.outputs[1 + carried_ + k]));
      ctx.setOutput(carried_ + k, std::move(stacked));
    }
    return Status::ok();
  }

 private:
  std::string label_;
  Body body_;
  size_t carried_ = 0;
};

// Scan (opset 9+): N state values and M scan inputs sliced along scan_input_axes; the body maps (N states,
// M slices) to (N states, K slices). Opset 8 adds a leading batch axis to every input and an optional
// sequence_lens first input; it runs the same loop once per batch entry.
class ScanKernel final : public Kernel {
 public:
  explicit ScanKernel(const KernelInfo& info) : label_(info.node.label()), opset_(info.opset) {}
  Status init(const KernelInfo& info) {
    const ir::Node& node = info.node;
    KILN_ASSIGN_OR_RETURN(body_, makeBody(info, "body"));
    scanInputs_ = static_cast<size_t>(node.attrInt("num_scan_inputs", 0));
    const size_t leading = opset_ < 9 ? 1 : 0;  // opset 8: sequence_lens
    if (scanInputs_ == 0 || node.inputs.size() < leading + scanInputs_) {
      return invalidArgument(label_ + ": num_scan_inputs must be between 1 and the number of inputs");
    }
    states_ = node.inputs.size() - leading - scanInputs_;
    if (body_.inputCount != states_ + scanInputs_ || body_.outputs.size() < states_) {
      return invalidArgument(label_ + ": body inputs/outputs do not match " + std::to_string(states_) +
                             " states and " + std::to_string(scanInputs_) + " scan inputs");
    }
    scanOutputs_ = body_.outputs.size() - states_;
    inputAxes_ = node.attrInts("scan_input_axes", std::vector<int64_t>(scanInputs_, 0));
    inputDirections_ = node.attrInts(opset_ < 9 ? "directions" : "scan_input_directions",
                                     std::vector<int64_t>(scanInputs_, 0));
    outputAxes_ = node.attrInts("scan_output_axes", std::vector<int64_t>(scanOutputs_, 0));
    outputDirections_ = node.attrInts("scan_output_directions", std::vector<int64_t>(scanOutputs_, 0));
    if (inputAxes_.size() != scanInputs_ || inputDirections_.size() != scanInputs_ ||
        outputAxes_.size() != scanOutputs_ || outputDirections_.size() != scanOutputs_) {
      return invalidArgument(label_ + ": scan axes/directions attributes have the wrong length");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    if (opset_ < 9) return computeBatched(ctx);
    std::vector<Tensor> states(states_), inputs(scanInputs_);
    for (size_t i = 0; i < states_; ++i) {
      if (!ctx.hasInput(i)) return invalidArgument(label_ + ": missing state input " + std::to_string(i));
      states[i] = *ctx.input(i);
    }
    for (size_t j = 0; j < scanInputs_; ++j) {
      if (!ctx.hasInput(states_ + j)) return invalidArgument(label_ + ": missing scan input " + std::to_string(j));
      inputs[j] = *ctx.input(states_ + j);
    }
    std::vector<std::vector<Tensor>> slices;
    KILN_ASSIGN_OR_RETURN(int64_t length, runSequence(states, inputs, inputAxes_, -1, slices));
    for (size_t i = 0; i < states_ && i < ctx.outputCount(); ++i) ctx.setOutput(i, std::move(states[i]));
    for (size_t k = 0; k < scanOutputs_ && states_ + k < ctx.outputCount(); ++k) {
      KILN_ASSIGN_OR_RETURN(Tensor stacked,
                            stackAxis(label_, slices[k], iterationOrder(length, outputDirections_[k] != 0),
                                      outputAxes_[k], body_.outputs[states_ + k]));
      ctx.setOutput(states_ + k, std::move(stacked));
    }
    return Status::ok();
  }

 private:
  // Runs the body over the scan inputs (sliced along `axes`), updating `states`; `limit` >= 0 caps the number of
  // steps (opset 8 sequence_lens). Returns the sequence length and fills slices[k][t].
  Result<int64_t> runSequence(std::vector<Tensor>& states, const std::vector<Tensor>& inputs,
                              const std::vector<int64_t>& axes, int64_t limit,
                              std::vector<std::vector<Tensor>>& slices) {
    int64_t length = -1;
    std::vector<size_t> axis(scanInputs_);
    for (size_t j = 0; j < scanInputs_; ++j) {
      KILN_ASSIGN_OR_RETURN(int64_t a, normalizeAxis(axes[j], static_cast<int64_t>(inputs[j].rank())));
      if (inputs[j].rank() == 0) return invalidArgument(label_ + ": scan inputs must have rank >= 1");
      axis[j] = static_cast<size_t>(a);
      const int64_t dim = inputs[j].dim(axis[j]);
      if (length >= 0 && dim != length) {
        return invalidArgument(label_ + ": scan inputs have different sequence lengths (" + std::to_string(length) +
                               " and " + std::to_string(dim) + ")");
      }
      length = dim;
    }
    const int64_t steps = limit >= 0 ? std::min(limit, length) : length;
    slices.assign(scanOutputs_, {});
    std::vector<Tensor> bodyInputs(states_ + scanInputs_);
    for (int64_t t = 0; t < steps; ++t) {
      for (size_t i = 0; i < states_; ++i) bodyInputs[i] = states[i];
      for (size_t j = 0; j < scanInputs_; ++j) {
        bodyInputs[states_ + j] = sliceAxis(inputs[j], axis[j], inputDirections_[j] ? steps - 1 - t : t);
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, body_.executor->run(bodyInputs));
      if (outputs.size() != states_ + scanOutputs_) {
        return invalidArgument(label_ + ": body returned " + std::to_string(outputs.size()) + " outputs");
      }
      for (size_t i = 0; i < states_; ++i) states[i] = std::move(outputs[i]);
      for (size_t k = 0; k < scanOutputs_; ++k) slices[k].push_back(std::move(outputs[states_ + k]));
    }
    return steps;
  }

  // Opset 8: every input has a batch axis 0; scan inputs scan along axis 1 (axis 0 after slicing the batch).
  Status computeBatched(KernelContext& ctx) {
    std::vector<int64_t> sequenceLengths;
    if (ctx.hasInput(0)) {
      KILN_ASSIGN_OR_RETURN(sequenceLengths, readInt64Values(*ctx.input(0)));
    }
    for (size_t i = 1; i < 1 + states_ + scanInputs_; ++i) {
      if (!ctx.hasInput(i) || ctx.input(i)->rank() == 0) {
        return invalidArgument(label_ + ": input " + std::to_string(i) + " is missing or has no batch axis");
      }
    }
    const int64_t batch = ctx.input(1)->dim(0);
    if (!sequenceLengths.empty() && static_cast<int64_t>(sequenceLengths.size()) != batch) {
      return invalidArgument(label_ + ": sequence_lens must have one entry per batch");
    }
    const std::vector<int64_t> axes(scanInputs_, 0);
    std::vector<std::vector<Tensor>> finalStates(states_), scanResults(scanOutputs_);
    int64_t maxLength = 0;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> states(states_), inputs(scanInputs_);
      for (size_t i = 0; i < states_; ++i) states[i] = sliceAxis(*ctx.input(1 + i), 0, b);
      for (size_t j = 0; j < scanInputs_; ++j) inputs[j] = sliceAxis(*ctx.input(1 + states_ + j), 0, b);
      const int64_t limit = sequenceLengths.empty() ? -1 : sequenceLengths[b];
      std::vector<std::vector<Tensor>> slices;
      KILN_ASSIGN_OR_RETURN(int64_t steps, runSequence(states, inputs, axes, limit, slices));
      maxLength = std::max(maxLength, scanInputs_ ? inputs[0].dim(0) : steps);
      for (size_t i = 0; i < states_; ++i) finalStates[i].push_back(std::move(states[i]));
      for (size_t k = 0; k < scanOutputs_; ++k) {
        KILN_ASSIGN_OR_RETURN(Tensor stacked, stackAxis(label_, slices[k], iterationOrder(steps, false), 0,
                                                        body_.outputs[states_ + k]));
        scanResults[k].push_back(std::move(stacked));
      }
    }
    const std::vector<int64_t> order = iterationOrder(batch, false);
    for (size_t i = 0; i < states_ && i < ctx.outputCount(); ++i) {
      KILN_ASSIGN_OR_RETURN(Tensor stacked, stackAxis(label_, finalStates[i], order, 0, body_.outputs[i]));
      ctx.setOutput(i, std::move(stacked));
    }
    // Shorter sequences leave zeros after their last step.
    for (size_t k = 0; k < scanOutputs_ && states_ + k < ctx.outputCount(); ++k) {
      for (Tensor& result : scanResults[k]) {
        if (result.rank() > 0 && result.dim(0) < maxLength && result.numel() > 0) {
          Shape full = result.shape();
          full[0] = maxLength;
          Tensor padded(result.dtype(), full);
          copyElements(result, 0, padded, 0, result.numel());
          result = std::move(padded);
        }
      }
      KILN_ASSIGN_OR_RETURN(Tensor stacked,
                            stackAxis(label_, scanResults[k], order, 0, body_.outputs[states_ + k]));
      ctx.setOutput(states_ + k, std::move(stacked));
    }
    return Status::ok();
  }

  std::string label_;
  int64_t opset_;
  Body body_;
  size_t states_ = 0, scanInputs_ = 0, scanOutputs_ = 0;
  std::vector<int64_t> inputAxes_, inputDirections_, outputAxes_, outputDirections_;
};

template <class K>
Result<std::unique_ptr<Kernel>> createKernel(const KernelInfo& info) {
  auto kernel = std::make_unique<K>(info);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerControlFlowKernels(KernelRegistry& registry) {
  registry.add("If", 1, kAnyOpset, createKernel<IfKernel>);
  registry.add("Loop", 1, kAnyOpset, createKernel<LoopKernel>);
  registry.add("Scan", 8, kAnyOpset, createKernel<ScanKernel>);
}

}  // namespace kiln::cpu
