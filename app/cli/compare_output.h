// kiln compare's text form: one table row per compared tensor, and the first divergence of a bisect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/compare.h"

namespace kiln::cli {

// Prints the header line and one row per comparison to stdout.
void printComparisonTable(const std::vector<TensorComparison>& comparisons);
// Prints "first divergence: ..." with the node's inputs and outputs as table rows, or that nothing diverged.
void printFirstDivergence(const std::optional<NodeDivergence>& divergence);

}  // namespace kiln::cli
