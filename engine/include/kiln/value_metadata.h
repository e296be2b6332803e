// What a session says about its graph inputs and outputs (ValueMetadata, Dimension), and the named values runs
// take and return (NamedTensor, NamedValue).
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln {

// One dimension of a declared shape: a fixed size, or a symbolic name (dim_param), or unknown.
struct KILN_EXPORT Dimension {
  int64_t value = -1;   // >= 0 when fixed
  std::string param;    // dim_param when symbolic
  // True when the dimension has a fixed size (value).
  bool isFixed() const { return value >= 0; }
};

// A graph input or output as the model declares it.
struct KILN_EXPORT ValueMetadata {
  std::string name;
  ValueKind kind = ValueKind::TENSOR;  // a sequence or optional is fed and returned through runValues()
  DataType dtype = DataType::UNDEFINED;  // element type (of the tensor, or of the sequence's tensors)
  bool hasShape = false;            // false when the model gives no shape at all
  std::vector<Dimension> shape;
};

// A tensor with the graph input or output name it is fed as or returned as.
struct KILN_EXPORT NamedTensor {
  std::string name;
  Tensor tensor;
};

// A graph input or output of any kind: tensor, sequence or optional (kiln/value.h).
struct KILN_EXPORT NamedValue {
  std::string name;
  Value value;
};

}  // namespace kiln
