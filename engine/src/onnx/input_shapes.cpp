#include "onnx/input_shapes.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace kiln {
namespace {

constexpr const char* kFreeDimOverridePrefix = "kiln.free_dim_override.";

std::string dimsText(const std::vector<int64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text.empty() ? "scalar" : text;
}

Status shapeError(const std::string& input, const std::vector<int64_t>& dims, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT, "the shape " + dimsText(dims) + " given for input '" + input + "' " + why);
}

// Sizes of symbolic dimensions, each remembering which input (or config key) fixed it.
struct SymbolSizes {
  std::map<std::string, std::pair<int64_t, std::string>> sizes;  // dim_param -> (size, who set it)

  Status fix(const std::string& param, int64_t size, const std::string& who) {
    auto [it, inserted] = sizes.try_emplace(param, size, who);
    if (inserted || it->second.first == size) return Status::ok();
    return Status(StatusCode::INVALID_ARGUMENT, "symbolic dimension '" + param + "' is " + std::to_string(size) +
                                                    " for " + who + " but " + std::to_string(it->second.first) +
                                                    " for " + it->second.second);
  }
};

// Checks one given shape against its input's declaration and records the sizes of its symbolic dimensions.
Status checkGivenShape(const ValueMetadata& input, const std::vector<int64_t>& dims, SymbolSizes& symbols) {
  for (int64_t d : dims) {
    if (d < 0) return shapeError(input.name, dims, "has a negative dimension");
  }
  if (!input.hasShape) return Status::ok();
  if (input.shape.size() != dims.size()) {
    return shapeError(input.name, dims, "has rank " + std::to_string(dims.size()) + ", the input has rank " +
                                            std::to_string(input.shape.size()));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dimension& declared = input.shape[i];
    if (declared.isFixed() && declared.value != dims[i]) {
      return shapeError(input.name, dims, "differs from the input's fixed dimension " + std::to_string(i) + " (" +
                                              std::to_string(declared.value) + ")");
    }
    if (!declared.isFixed() && !declared.param.empty()) {
      KILN_RETURN_IF_ERROR(symbols.fix(declared.param, dims[i], "input '" + input.name + "'"));
    }
  }
  return Status::ok();
}

}  // namespace

Result<int64_t> parseFreeDimOverride(const std::string& param, const std::string& text) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status(StatusCode::INVALID_ARGUMENT, kFreeDimOverridePrefix + param +
                                                    " must be a non-negative integer, got '" + text + "'");
  }
  return value;
}

Result<std::vector<ValueMetadata>> resolveInputShapes(const ir::Graph& graph, const InputShapeRequest& request) {
  std::vector<ValueMetadata> inputs;
  for (const auto& in : graph.inputs) {
    if (!graph.isInitializer(in.name)) inputs.push_back(ir::toValueMetadata(in));
  }
  SymbolSizes symbols;
  for (const auto& [name, dims] : request.shapes) {
    auto input = std::find_if(inputs.begin(), inputs.end(), [&name = name](const ValueMetadata& v) { return v.name == name; });
    if (input == inputs.end()) {
      return Status(StatusCode::INVALID_ARGUMENT, "a shape (" + dimsText(dims) + ") is given for '" + name +
                                                      "', which is not a model input");
    }
    KILN_RETURN_IF_ERROR(checkGivenShape(*input, dims, symbols));
  }
  for (auto& input : inputs) {
    if (auto given = request.shapes.find(input.name); given != request.shapes.end()) {
      if (!input.hasShape) input.shape.assign(given->second.size(), Dimension{});
      input.hasShape = true;
      for (size_t i = 0; i < input.shape.size(); ++i) input.shape[i].value = given->second[i];
      continue;
    }
    for (auto& dim : input.shape) {
      if (dim.isFixed() || dim.param.empty()) continue;
      if (auto text = request.freeDimOverrides.find(dim.param); text != request.freeDimOverrides.end()) {
        KILN_ASSIGN_OR_RETURN(const int64_t value, parseFreeDimOverride(dim.param, text->second));
        KILN_RETURN_IF_ERROR(symbols.fix(dim.param, value, std::string(kFreeDimOverridePrefix) + dim.param));
      }
      if (auto it = symbols.sizes.find(dim.param); it != symbols.sizes.end()) dim.value = it->second.first;
    }
  }
  // An override of a dimension only given inputs use must still agree with them.
  for (const auto& [param, size] : symbols.sizes) {
    if (auto text = request.freeDimOverrides.find(param); text != request.freeDimOverrides.end()) {
      KILN_ASSIGN_OR_RETURN(const int64_t value, parseFreeDimOverride(param, text->second));
      KILN_RETURN_IF_ERROR(symbols.fix(param, value, std::string(kFreeDimOverridePrefix) + param));
    }
  }
  return inputs;
}

}  // namespace kiln
