// An attribute's value as one line of text, shared by the model description (kiln/model_info.h: what an attribute
// is) and the model diff (kiln/model_diff.h: which value changed): lists show their first kMaxListItems items and
// the count, a graph its name and node count. How floats, strings and tensors read is the caller's: a description
// shortens them, a diff must tell any two different values apart.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

inline constexpr size_t kMaxListItems = 16;

struct AttributeTextStyle {
  std::function<std::string(float)> floatText;
  std::function<std::string(const std::string&)> stringText;
  std::function<std::string(const Tensor&)> tensorText;
};

// "[0, 0, 1, 1]"; "[1, 2, ..., ... (40 values)]" past kMaxListItems.
template <typename T, typename Format>
std::string listText(const std::vector<T>& items, Format format) {
  std::string text = "[";
  const size_t shown = std::min(items.size(), kMaxListItems);
  for (size_t i = 0; i < shown; ++i) text += (i ? ", " : "") + format(items[i]);
  if (shown < items.size()) text += ", ... (" + std::to_string(items.size()) + " values)";
  return text + "]";
}

// "graph 'then_branch' (3 nodes)".
std::string graphText(const std::shared_ptr<Graph>& graph);
// No control characters but tab, no DEL: text a line can show as it is.
bool isPrintableText(const std::string& text);
// "float32[16,3,3,3]".
std::string tensorTypeText(const Tensor& tensor);
// The attribute's value in `style`; "" with `unknown` for a type Kiln does not read.
std::string attributeText(const Attribute& attr, const AttributeTextStyle& style, const std::string& unknown);

}  // namespace kiln::ir
