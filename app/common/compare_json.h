// kiln/compare.h results as JSON (kiln compare --json; the studio reads the same fields).
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/compare.h"
#include "node_data.h"

namespace kiln::app {

// {"name", "passed", "dtype", "shape", "elements", "max_abs_error", "max_rel_error", "mean_abs_error",
//  "cosine_similarity", "fraction_beyond_tolerance", "beyond_tolerance", "allowed_beyond" (how many may be beyond
//  with the tensor passing: Tolerance::maxFractionBeyond of "elements"), "nan_mismatches", "inf_mismatches",
//  "worst": {"index", "flat_index", "value", "reference"}, "dtype_mismatch", "shape_mismatch", "missing", ...}.
// Non-finite numbers are written as the strings "nan", "inf", "-inf".
nlohmann::json tensorComparisonToJson(const TensorComparison& comparison);
// {"node", "op_type", "inputs": [...], "outputs": [...]} with each entry as tensorComparisonToJson writes it.
nlohmann::json nodeDivergenceToJson(const NodeDivergence& divergence);

// Per-node data (node_data.h, kind "compare") of a bisect that compared every node: summary "atol", "rtol",
// "max_fraction_beyond" (the tolerance), "side", "reference", ...; metrics max_abs_error,
// max_rel_error, mean_abs_error, fraction_beyond_tolerance, beyond_tolerance, nan_mismatches, inf_mismatches (the
// worst over the node's outputs) and cosine_similarity (the lowest); details "passed", "outputs" (each as
// tensorComparisonToJson) and "first_divergence": true on that node.
NodeData compareNodeData(const BisectResult& bisect, const std::string& model, const Tolerance& tolerance,
                         const std::string& side, const std::string& reference);

}  // namespace kiln::app
