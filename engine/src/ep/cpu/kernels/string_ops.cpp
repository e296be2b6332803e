// StringNormalizer (opset 10): drops stopwords, then changes case. TfIdfVectorizer (tfidf_vectorizer.cpp)
// registers through registerStringKernels too.
//  - Input [C] or [1, C] strings; output [C'] or [1, C'] with the survivors in order. When every string is a
//    stopword the output is a single empty string, [1] or [1, 1] (as ONNX Runtime does).
//  - is_case_sensitive = 0 compares stopwords after lower-casing both sides.
//  - Case changes work on UTF-8 code points with locale-independent simple mappings for ASCII, Latin-1,
//    Latin Extended-A, Greek and basic Cyrillic (what en_US and most European locales do for those letters).
//    The `locale` attribute is accepted but selects nothing: no locale-specific rules (Turkish dotless i,
//    German sharp s expansion) are applied. Bytes that are not valid UTF-8 pass through unchanged.
#include <string>
#include <unordered_set>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

void registerTfIdfVectorizerKernels(KernelRegistry& registry);  // tfidf_vectorizer.cpp

namespace {

// Runs of case pairs in Latin Extended-A where the upper-case letter sits at even offsets from `first`.
struct CasePairs {
  char32_t first, last;
};
constexpr CasePairs kLatinExtendedPairs[] = {
    {0x100, 0x12F}, {0x132, 0x137}, {0x139, 0x148}, {0x14A, 0x177}, {0x179, 0x17E}};

char32_t toLowerCodePoint(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x130) return 'i';
  if (c == 0x178) return 0xFF;
  for (const CasePairs& p : kLatinExtendedPairs) {
    if (c >= p.first && c <= p.last) return (c - p.first) % 2 == 0 ? c + 1 : c;
  }
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  return c;
}

char32_t toUpperCodePoint(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  for (const CasePairs& p : kLatinExtendedPairs) {
    if (c >= p.first && c <= p.last) return (c - p.first) % 2 == 1 ? c - 1 : c;
  }
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x3B1 && c <= 0x3CB) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

// Decodes the UTF-8 sequence at s[i]; returns its length (0 when it is not valid UTF-8).
size_t decodeUtf8(const std::string& s, size_t i, char32_t& c) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    c = b0;
    return 1;
  }
  const size_t length = b0 >= 0xF5 ? 0 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 ? 2 : 0;
  if (length == 0 || i + length > s.size()) return 0;
  c = b0 & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  const bool overlong = (length == 3 && c < 0x800) || (length == 4 && c < 0x10000);
  return overlong || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ? 0 : length;
}

void appendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

enum class CaseChange { None, Lower, Upper };

std::string changeCase(const std::string& s, CaseChange change) {
  if (change == CaseChange::None) return s;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t c = 0;
    const size_t length = decodeUtf8(s, i, c);
    if (length == 0) {
      out.push_back(s[i++]);
      continue;
    }
    appendUtf8(out, change == CaseChange::Lower ? toLowerCodePoint(c) : toUpperCodePoint(c));
    i += length;
  }
  return out;
}

class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(CaseChange change, bool caseSensitive, const std::vector<std::string>& stopwords)
      : change_(change), caseSensitive_(caseSensitive) {
    for (const std::string& word : stopwords) {
      stopwords_.insert(caseSensitive_ ? word : changeCase(word, CaseChange::Lower));
    }
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return nodeError("StringNormalizer", "input 'X' is required");
    if (x->dtype() != DataType::STRING) {
      return nodeError("StringNormalizer", std::string("X must be string, got ") + dataTypeName(x->dtype()));
    }
    const bool twoDim = x->rank() == 2;
    if (!(x->rank() == 1 || (twoDim && x->dim(0) == 1))) {
      return nodeError("StringNormalizer", "X must be [C] or [1, C], got " + shapeToString(x->shape()));
    }
    std::vector<std::string> kept;
    const std::string* in = x->strings();
    for (int64_t i = 0, n = x->numel(); i < n; ++i) {
      const bool isStopword =
          !stopwords_.empty() &&
          stopwords_.count(caseSensitive_ ? in[i] : changeCase(in[i], CaseChange::Lower)) != 0;
      if (!isStopword) kept.push_back(changeCase(in[i], change_));
    }
    if (kept.empty()) kept.emplace_back();  // all stopwords: one empty string
    const int64_t count = static_cast<int64_t>(kept.size());
    ctx.setOutput(0, Tensor::fromStrings(twoDim ? Shape{1, count} : Shape{count}, std::move(kept)));
    return Status::ok();
  }

 private:
  CaseChange change_;
  bool caseSensitive_;
  std::unordered_set<std::string> stopwords_;
};

Result<std::unique_ptr<Kernel>> createStringNormalizer(const KernelInfo& info) {
  const std::string action = info.node.attrString("case_change_action", "NONE");
  CaseChange change = CaseChange::None;
  if (action == "LOWER") {
    change = CaseChange::Lower;
  } else if (action == "UPPER") {
    change = CaseChange::Upper;
  } else if (action != "NONE") {
    return nodeError("StringNormalizer",
                     "case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
  }
  return std::unique_ptr<Kernel>(new StringNormalizerKernel(
      change, info.node.attrInt("is_case_sensitive", 0) != 0, info.node.attrStrings("stopwords")));
}

}  // namespace

void registerStringKernels(KernelRegistry& registry) {
  registry.add("StringNormalizer", 10, kAnyOpset, createStringNormalizer);
  registerTfIdfVectorizerKernels(registry);
}

}  // namespace kiln::cpu
