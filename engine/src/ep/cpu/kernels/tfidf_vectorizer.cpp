// TfIdfVectorizer (opset 9): counts the pool's n-grams in each row of X and weighs the counts.
//  - The pool holds n-grams grouped by length: ngram_counts[i] is where the (i+1)-grams start in
//    pool_int64s or pool_strings, and ngram_indexes[j] is the output column of the pool's j-th n-gram. The
//    output has max(ngram_indexes) + 1 columns: [C] -> [columns], [N, C] -> [N, columns]; rows never share
//    n-grams.
//  - An n-gram of length n >= 2 starting at position s with skip k takes the items s, s + (k + 1), ...,
//    s + (n - 1)(k + 1), for every k in [0, max_skip_count]; each (start, skip) is one occurrence. Unigrams
//    are counted once per position whatever the skip.
//  - Only lengths in [min_gram_length, max_gram_length] count. mode TF gives counts, IDF gives
//    weights[col] (1 without weights) where the count is non-zero, TFIDF counts * weights[col]; weights are
//    indexed by output column, as in ONNX Runtime.
//  - int32/int64 inputs go with pool_int64s, string inputs with pool_strings.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

enum class TfIdfMode { TF, IDF, TFIDF };

struct TfIdfConfig {
  TfIdfMode mode = TfIdfMode::TF;
  int64_t minGram = 1, maxGram = 1, maxSkip = 0;
  bool stringPool = false;
  int64_t columns = 0;
  std::vector<float> weights;
  // byLength[n] maps an n-gram of token ids to its output column. Tokens are the pool's integers, or for a
  // string pool the index of each distinct pool string in tokenIds.
  std::vector<std::map<std::vector<int64_t>, int64_t>> byLength;
  std::unordered_map<std::string, int64_t> tokenIds;
};

Status configError(const std::string& message) { return nodeError("TfIdfVectorizer", message); }

Result<TfIdfConfig> readConfig(const ir::Node& node) {
  TfIdfConfig cfg;
  const std::string mode = node.attrString("mode", "");
  if (mode == "TF") {
    cfg.mode = TfIdfMode::TF;
  } else if (mode == "IDF") {
    cfg.mode = TfIdfMode::IDF;
  } else if (mode == "TFIDF") {
    cfg.mode = TfIdfMode::TFIDF;
  } else {
    return configError("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  }
  cfg.minGram = node.attrInt("min_gram_length", 0);
  cfg.maxGram = node.attrInt("max_gram_length", 0);
  cfg.maxSkip = node.attrInt("max_skip_count", 0);
  if (cfg.minGram < 1 || cfg.maxGram < cfg.minGram || cfg.maxSkip < 0) {
    return configError("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got " +
                       std::to_string(cfg.minGram) + ", " + std::to_string(cfg.maxGram) + ", " +
                       std::to_string(cfg.maxSkip));
  }
  const std::vector<int64_t> counts = node.attrInts("ngram_counts");
  const std::vector<int64_t> indexes = node.attrInts("ngram_indexes");
  const std::vector<int64_t> intPool = node.attrInts("pool_int64s");
  const std::vector<std::string> stringPool = node.attrStrings("pool_strings");
  if (node.hasAttribute("pool_int64s") == node.hasAttribute("pool_strings")) {
    return configError("exactly one of pool_int64s and pool_strings must be given");
  }
  cfg.stringPool = node.hasAttribute("pool_strings");
  std::vector<int64_t> pool;
  if (cfg.stringPool) {
    for (const std::string& s : stringPool) {
      pool.push_back(cfg.tokenIds.emplace(s, static_cast<int64_t>(cfg.tokenIds.size())).first->second);
    }
  } else {
    pool = intPool;
  }
  const int64_t poolSize = static_cast<int64_t>(pool.size());
  if (counts.empty() && poolSize > 0) return configError("ngram_counts is required with a non-empty pool");
  cfg.byLength.resize(counts.size() + 1);
  size_t ngram = 0;  // index of the current pool n-gram in ngram_indexes
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : poolSize;
    if (begin < 0 || end < begin || end > poolSize || (end - begin) % n != 0) {
      return configError("ngram_counts " + std::to_string(i) + " does not delimit whole " +
                         std::to_string(n) + "-grams in a pool of " + std::to_string(poolSize));
    }
    for (int64_t p = begin; p < end; p += n, ++ngram) {
      if (ngram >= indexes.size())
        return configError("ngram_indexes has fewer entries than the pool has n-grams");
      if (indexes[ngram] < 0) return configError("ngram_indexes must not be negative");
      cfg.byLength[static_cast<size_t>(n)][std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n)] =
          indexes[ngram];
      cfg.columns = std::max(cfg.columns, indexes[ngram] + 1);
    }
  }
  if (ngram != indexes.size()) {
    return configError("ngram_indexes has " + std::to_string(indexes.size()) +
                       " entries but the pool holds " + std::to_string(ngram) + " n-grams");
  }
  cfg.weights = node.attrFloats("weights");
  if (!cfg.weights.empty() &&
      (cfg.weights.size() != indexes.size() || static_cast<int64_t>(cfg.weights.size()) < cfg.columns)) {
    return configError("weights must hold one value per output column (" + std::to_string(cfg.columns) +
                       "), got " + std::to_string(cfg.weights.size()));
  }
  return cfg;
}

class TfIdfVectorizerKernel final : public Kernel {
 public:
  explicit TfIdfVectorizerKernel(TfIdfConfig cfg) : cfg_(std::move(cfg)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return configError("input 'X' is required");
    if (x->rank() != 1 && x->rank() != 2) {
      return configError("X must be [C] or [N, C], got " + shapeToString(x->shape()));
    }
    const bool isString = x->dtype() == DataType::STRING;
    if (isString != cfg_.stringPool) {
      return configError(std::string("X is ") + dataTypeName(x->dtype()) + " but the pool is " +
                         (cfg_.stringPool ? "pool_strings" : "pool_int64s"));
    }
    std::vector<int64_t> tokens(static_cast<size_t>(x->numel()));
    if (isString) {
      // Strings outside the pool become -1, which no pool n-gram contains.
      for (size_t i = 0; i < tokens.size(); ++i) {
        const auto it = cfg_.tokenIds.find(x->strings()[i]);
        tokens[i] = it == cfg_.tokenIds.end() ? -1 : it->second;
      }
    } else {
      KILN_ASSIGN_OR_RETURN(tokens, readIndexInput("TfIdfVectorizer", *x, "X"));
    }
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1, length = x->shape().back();
    Tensor& y = ctx.allocateOutput(0, DataType::FLOAT,
                                   x->rank() == 2 ? Shape{rows, cfg_.columns} : Shape{cfg_.columns});
    std::vector<int64_t> counts(static_cast<size_t>(cfg_.columns));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      countRow(tokens.data() + r * length, length, counts);
      float* out = y.data<float>() + r * cfg_.columns;
      for (int64_t c = 0; c < cfg_.columns; ++c) {
        const float weight = cfg_.weights.empty() ? 1.0f : cfg_.weights[static_cast<size_t>(c)];
        const float count = static_cast<float>(counts[static_cast<size_t>(c)]);
        switch (cfg_.mode) {
          case TfIdfMode::TF:
            out[c] = count;
            break;
          case TfIdfMode::IDF:
            out[c] = count > 0 ? weight : 0.0f;
            break;
          case TfIdfMode::TFIDF:
            out[c] = count * weight;
            break;
        }
      }
    }
    return Status::ok();
  }

 private:
  void countRow(const int64_t* row, int64_t length, std::vector<int64_t>& counts) const {
    const int64_t maxGram = std::min<int64_t>(cfg_.maxGram, static_cast<int64_t>(cfg_.byLength.size()) - 1);
    std::vector<int64_t> key;
    for (int64_t start = 0; start < length; ++start) {
      for (int64_t n = cfg_.minGram; n <= maxGram; ++n) {
        const auto& grams = cfg_.byLength[static_cast<size_t>(n)];
        if (grams.empty()) continue;
        const int64_t maxSkip = n == 1 ? 0 : cfg_.maxSkip;
        for (int64_t skip = 0; skip <= maxSkip; ++skip) {
          const int64_t step = skip + 1;
          if (start + (n - 1) * step >= length) break;
          key.clear();
          for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * step]);
          const auto it = grams.find(key);
          if (it != grams.end()) ++counts[static_cast<size_t>(it->second)];
        }
      }
    }
  }

  TfIdfConfig cfg_;
};

}  // namespace

void registerTfIdfVectorizerKernels(KernelRegistry& registry) {
  registry.add("TfIdfVectorizer", 9, kAnyOpset,
               [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
                 KILN_ASSIGN_OR_RETURN(TfIdfConfig cfg, readConfig(info.node));
                 return std::unique_ptr<Kernel>(new TfIdfVectorizerKernel(std::move(cfg)));
               });
}

}  // namespace kiln::cpu
