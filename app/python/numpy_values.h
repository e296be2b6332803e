// NumPy arrays <-> Kiln values: what feeds a run and what a run returns. Inputs are wrapped without a copy
// when the array is C-contiguous, aligned and of a fixed-size type; outputs are NumPy arrays over the
// engine's own storage.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "kiln/tensor.h"
#include "kiln/value.h"
#include "kiln/value_metadata.h"

namespace kiln::python {

// The Kiln element type of a NumPy dtype (UNDEFINED when Kiln has none); unicode, bytes and object arrays are
// STRING.
DataType dataTypeOfNumpy(const pybind11::dtype& dtype);

// A tensor over `object` (anything numpy.asarray accepts). Needs the GIL. INVALID_ARGUMENT (as StatusError)
// for an element type Kiln has no tensor type for, naming `name`.
Tensor tensorFromPython(const pybind11::handle& object, const std::string& name);

// The run input `object` fed as `meta` declares it: a tensor, a list of arrays for a sequence, None for an
// empty optional. Needs the GIL.
Value valueFromPython(const pybind11::handle& object, const ValueMetadata& meta);

// A NumPy array sharing the tensor's storage (strings: an object array of str); a device tensor is read back
// into a new host copy first. Needs the GIL.
pybind11::object tensorToPython(const Tensor& tensor);

// A tensor value as an array, a sequence as a list of arrays, an empty optional as None. Needs the GIL.
pybind11::object valueToPython(const Value& value);

}  // namespace kiln::python
