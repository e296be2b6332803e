// All-pairs (pairwise) test selection: every pair of values of two axes that some valid case can hold is held by
// at least one chosen case, with far fewer cases than the full product. Greedy and deterministic: each step takes
// the first valid case that covers the most pairs not yet covered.
#pragma once

#include <functional>
#include <vector>

namespace kiln::testing {

// A case gives one value index per axis.
using AxisValues = std::vector<int>;

// `sizes[a]` values on axis a; `valid` says whether a full case is possible (constraints between axes).
std::vector<AxisValues> pairwiseCases(const std::vector<int>& sizes, const std::function<bool(const AxisValues&)>& valid);

// The pairs ((axis a, value), (axis b, value)) that some valid case holds and none of `cases` does (empty when
// `cases` is pairwise-complete).
struct MissingPair {
  int axisA, valueA, axisB, valueB;
};
std::vector<MissingPair> uncoveredPairs(const std::vector<int>& sizes, const std::function<bool(const AxisValues&)>& valid,
                                        const std::vector<AxisValues>& cases);

}  // namespace kiln::testing
