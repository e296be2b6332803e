#include "kiln/io_binding.h"

#include <algorithm>

namespace kiln {

void IoBinding::bindInput(const std::string& name, Tensor value) {
  auto it = std::find_if(inputs_.begin(), inputs_.end(), [&](const NamedTensor& bound) { return bound.name == name; });
  if (it != inputs_.end()) {
    it->tensor = std::move(value);
  } else {
    inputs_.push_back({name, std::move(value)});
  }
}

void IoBinding::bindOutput(const std::string& name, OutputPlace place) {
  auto it = std::find_if(outputPlaces_.begin(), outputPlaces_.end(), [&](const auto& bound) { return bound.first == name; });
  if (it != outputPlaces_.end()) {
    it->second = place;
  } else {
    outputPlaces_.emplace_back(name, place);
  }
}

}  // namespace kiln
