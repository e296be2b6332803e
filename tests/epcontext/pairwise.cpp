#include "pairwise.h"

#include <cstddef>

namespace kiln::testing {
namespace {

// Pair ids: for axes a < b, a block of sizes[a] * sizes[b] ids.
struct PairIndex {
  explicit PairIndex(const std::vector<int>& sizes) : sizes_(sizes) {
    const size_t n = sizes.size();
    base_.assign(n * n, 0);
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        base_[a * n + b] = count_;
        count_ += static_cast<size_t>(sizes[a] * sizes[b]);
      }
    }
  }
  size_t count() const { return count_; }
  void idsOf(const AxisValues& c, std::vector<size_t>& out) const {
    out.clear();
    const size_t n = sizes_.size();
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        out.push_back(base_[a * n + b] + static_cast<size_t>(c[a] * sizes_[b] + c[b]));
      }
    }
  }
  MissingPair describe(size_t id) const {
    const size_t n = sizes_.size();
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        const size_t first = base_[a * n + b];
        const size_t size = static_cast<size_t>(sizes_[a] * sizes_[b]);
        if (id >= first && id < first + size) {
          const int offset = static_cast<int>(id - first);
          return {static_cast<int>(a), offset / sizes_[b], static_cast<int>(b), offset % sizes_[b]};
        }
      }
    }
    return {-1, -1, -1, -1};
  }

 private:
  std::vector<int> sizes_;
  std::vector<size_t> base_;
  size_t count_ = 0;
};

std::vector<AxisValues> validCases(const std::vector<int>& sizes, const std::function<bool(const AxisValues&)>& valid) {
  std::vector<AxisValues> out;
  AxisValues c(sizes.size(), 0);
  while (true) {
    if (valid(c)) out.push_back(c);
    size_t axis = 0;
    while (axis < c.size() && ++c[axis] == sizes[axis]) c[axis++] = 0;
    if (axis == c.size()) return out;
  }
}

}  // namespace

std::vector<AxisValues> pairwiseCases(const std::vector<int>& sizes, const std::function<bool(const AxisValues&)>& valid) {
  const PairIndex index(sizes);
  const std::vector<AxisValues> candidates = validCases(sizes, valid);
  std::vector<std::vector<size_t>> ids(candidates.size());
  std::vector<char> needed(index.count(), 0);
  for (size_t i = 0; i < candidates.size(); ++i) {
    index.idsOf(candidates[i], ids[i]);
    for (size_t id : ids[i]) needed[id] = 1;
  }
  std::vector<AxisValues> chosen;
  while (true) {
    size_t best = candidates.size();
    int bestGain = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      int gain = 0;
      for (size_t id : ids[i]) gain += needed[id];
      if (gain > bestGain) {
        bestGain = gain;
        best = i;
      }
    }
    if (best == candidates.size()) return chosen;
    for (size_t id : ids[best]) needed[id] = 0;
    chosen.push_back(candidates[best]);
  }
}

std::vector<MissingPair> uncoveredPairs(const std::vector<int>& sizes, const std::function<bool(const AxisValues&)>& valid,
                                        const std::vector<AxisValues>& cases) {
  const PairIndex index(sizes);
  std::vector<char> needed(index.count(), 0);
  std::vector<size_t> ids;
  for (const auto& c : validCases(sizes, valid)) {
    index.idsOf(c, ids);
    for (size_t id : ids) needed[id] = 1;
  }
  for (const auto& c : cases) {
    index.idsOf(c, ids);
    for (size_t id : ids) needed[id] = 0;
  }
  std::vector<MissingPair> missing;
  for (size_t id = 0; id < needed.size(); ++id) {
    if (needed[id]) missing.push_back(index.describe(id));
  }
  return missing;
}

}  // namespace kiln::testing
