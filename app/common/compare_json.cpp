#include "compare_json.h"

#include <cmath>

namespace kiln::app {
namespace {

nlohmann::json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

}  // namespace

nlohmann::json tensorComparisonToJson(const TensorComparison& c) {
  nlohmann::json j = {{"name", c.name},
                      {"passed", c.passed()},
                      {"dtype", dataTypeName(c.dtype)},
                      {"reference_dtype", dataTypeName(c.referenceDtype)},
                      {"shape", c.shape},
                      {"reference_shape", c.referenceShape},
                      {"missing", c.missing},
                      {"dtype_mismatch", c.dtypeMismatch},
                      {"shape_mismatch", c.shapeMismatch},
                      {"unsupported_dtype", c.unsupportedDtype},
                      {"elements", c.elements},
                      {"beyond_tolerance", c.beyondTolerance},
                      {"fraction_beyond_tolerance", number(c.fractionBeyondTolerance)},
                      {"max_abs_error", number(c.maxAbsError)},
                      {"max_rel_error", number(c.maxRelError)},
                      {"mean_abs_error", number(c.meanAbsError)},
                      {"cosine_similarity", number(c.cosineSimilarity)},
                      {"nan_mismatches", c.nanMismatches},
                      {"inf_mismatches", c.infMismatches}};
  if (c.worst.flatIndex >= 0) {
    j["worst"] = {{"index", c.worst.index},
                  {"flat_index", c.worst.flatIndex},
                  {"value", number(c.worst.value)},
                  {"reference", number(c.worst.reference)}};
  } else {
    j["worst"] = nullptr;
  }
  return j;
}

nlohmann::json nodeDivergenceToJson(const NodeDivergence& divergence) {
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const auto& c : divergence.inputs) inputs.push_back(tensorComparisonToJson(c));
  for (const auto& c : divergence.outputs) outputs.push_back(tensorComparisonToJson(c));
  return {{"node", divergence.node}, {"op_type", divergence.opType}, {"inputs", inputs}, {"outputs", outputs}};
}

}  // namespace kiln::app
