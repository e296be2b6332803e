// One query row's attention over a run of keys, shared by the contrib attentions (GroupQueryAttention,
// MultiHeadAttention): scores[t] = scale * query . keys[t] for t in [first, last], capped (softcap * tanh(score /
// softcap) when softcap > 0), then adjusted by the caller (masks, biases), softmaxed and used to weigh the values
// into acc (vHead values; zeros when first > last). With smooth softmax the denominator also holds an implicit zero
// logit. Keys and values are rows of `head` and `vHead` elements of any element type; the math runs in C.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::cpu {

struct AttentionRowOptions {
  float softcap = 0.0f;
  bool smoothSoftmax = false;
};

template <class C, class T, class Adjust>
void attendRow(const C* query, const T* keys, const T* values, int64_t head, int64_t vHead, int64_t first,
               int64_t last, C scale, AttentionRowOptions options, Adjust&& adjust, C* scores, C* acc) {
  std::fill(acc, acc + vHead, C(0));
  if (first > last) return;
  C top = std::numeric_limits<C>::lowest();
  for (int64_t t = first; t <= last; ++t) {
    const T* k = keys + t * head;
    C dot = 0;
    for (int64_t i = 0; i < head; ++i) dot += query[i] * static_cast<C>(k[i]);
    C score = dot * scale;
    if (options.softcap > 0.0f) {
      const C cap = static_cast<C>(options.softcap);
      score = cap * std::tanh(score / cap);
    }
    score = adjust(t, score);
    scores[t] = score;
    top = std::max(top, score);
  }
  if (options.smoothSoftmax) top = std::max(top, C(0));
  C sum = options.smoothSoftmax ? std::exp(-top) : C(0);
  for (int64_t t = first; t <= last; ++t) {
    scores[t] = std::exp(scores[t] - top);
    sum += scores[t];
  }
  for (int64_t t = first; t <= last; ++t) {
    const C p = scores[t] / sum;
    const T* v = values + t * vHead;
    for (int64_t i = 0; i < vHead; ++i) acc[i] += p * static_cast<C>(v[i]);
  }
}

}  // namespace kiln::cpu
