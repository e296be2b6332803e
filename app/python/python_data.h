// Engine description structures as plain Python dicts (keys are the fields' snake_case names).
#pragma once

#include <pybind11/pybind11.h>

#include "kiln/compatibility.h"
#include "kiln/context_binary.h"
#include "kiln/device.h"
#include "kiln/epcontext.h"
#include "kiln/model_info.h"

namespace kiln::python {

// A declared input or output: name, kind, dtype (ONNX enum value), has_shape, shape (int, str or None per
// dim).
pybind11::dict toPython(const ValueMetadata& value);
// Each of these: every field of the structure, nested structures as dicts, vectors as lists.
pybind11::dict toPython(const ModelInfo& info);
pybind11::dict toPython(const EpContextModelInfo& info);
pybind11::dict toPython(const ContextBinaryInfo& info);
pybind11::dict toPython(const CompatibilityVerdict& verdict);
pybind11::dict toPython(const MergeResult& result);
pybind11::dict toPython(const VulkanDeviceDescription& device);
pybind11::dict toPython(const ModelCompatibility& compatibility);

}  // namespace kiln::python
