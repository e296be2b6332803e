#include "compare_json.h"

#include <algorithm>
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
                      {"allowed_beyond", c.allowedBeyond},
                      {"fraction_beyond_tolerance", number(c.fractionBeyondTolerance)},
                      {"max_abs_error", number(c.maxAbsError)},
                      {"max_rel_error", number(c.maxRelError)},
                      {"mean_abs_error", number(c.meanAbsError)},
                      {"cosine_similarity", number(c.cosineSimilarity)},
                      {"nan_mismatches", c.nanMismatches},
                      {"inf_mismatches", c.infMismatches},
                      {"abs_error_histogram", c.errorHistogram}};
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

NodeData compareNodeData(const BisectResult& bisect, const std::string& model, const Tolerance& tolerance,
                         const std::string& side, const std::string& reference) {
  NodeData data{"compare", "kiln compare", model, {}, nlohmann::json::object()};
  data.summary = {{"side", side}, {"reference", reference}, {"atol", tolerance.atol}, {"rtol", tolerance.rtol},
                  {"max_fraction_beyond", tolerance.maxFractionBeyond},
                  {"values_compared", bisect.valuesCompared}, {"nodes_in_subgraphs_not_exposed", bisect.nodesInSubgraphs}};
  for (const auto& node : bisect.nodes) {
    NodeDatum datum{node.node, node.opType, node.graph, {}, nlohmann::json::object()};
    double maxAbs = 0, maxRel = 0, meanAbs = 0, fraction = 0, cosine = 1;
    int64_t beyond = 0, nans = 0, infs = 0;
    std::vector<int64_t> histogram;  // over every output: the studio draws it for the node
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& c : node.outputs) {
      histogram.resize(std::max(histogram.size(), c.errorHistogram.size()), 0);
      for (size_t bin = 0; bin < c.errorHistogram.size(); ++bin) histogram[bin] += c.errorHistogram[bin];
      maxAbs = std::max(maxAbs, c.maxAbsError);
      maxRel = std::max(maxRel, c.maxRelError);
      meanAbs = std::max(meanAbs, c.meanAbsError);
      fraction = std::max(fraction, c.fractionBeyondTolerance);
      cosine = std::min(cosine, c.cosineSimilarity);
      beyond += c.beyondTolerance;
      nans += c.nanMismatches;
      infs += c.infMismatches;
      outputs.push_back(tensorComparisonToJson(c));
    }
    // Metrics are numbers by the format's rule: a non-finite one (never expected: errors are over finite pairs)
    // is left out rather than written as null.
    const std::pair<const char*, double> metrics[] = {
        {"max_abs_error", maxAbs}, {"max_rel_error", maxRel}, {"mean_abs_error", meanAbs},
        {"cosine_similarity", cosine}, {"fraction_beyond_tolerance", fraction},
        {"beyond_tolerance", static_cast<double>(beyond)}, {"nan_mismatches", static_cast<double>(nans)},
        {"inf_mismatches", static_cast<double>(infs)}};
    for (const auto& [name, value] : metrics) {
      if (std::isfinite(value)) datum.metrics[name] = value;
    }
    datum.details["passed"] = node.passed();
    datum.details["outputs"] = std::move(outputs);
    datum.details["abs_error_histogram"] = histogram;
    if (bisect.firstDivergence && bisect.firstDivergence->node == node.node) datum.details["first_divergence"] = true;
    data.nodes.push_back(std::move(datum));
  }
  bindToModel(data);
  return data;
}

}  // namespace kiln::app
