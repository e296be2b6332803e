// The parts of the _kiln extension module, one function per area (module.cpp calls them in order).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/session_options.h"

namespace kiln::python {

// CancellationToken, RunOptions and Session (create, run, metadata, timings, profile).
void bindSession(pybind11::module_& module);
// Tensor (host or device) and IoBinding, for kiln.OrtValue and kiln.IOBinding.
void bindIoBinding(pybind11::module_& module);
// compile(): kiln::compileModel with every ModelCompilationOptions setting.
void bindCompile(pybind11::module_& module);
// inspect_model / inspect_ctx_model / inspect_binary / model_compatibility / merge / devices / config keys.
void bindTools(pybind11::module_& module);
// kiln.compare (kiln/compare.h).
void bindCompare(pybind11::module_& module);
// package_model / read_package / choose_package_variant (kiln/model_package.h).
void bindPackage(pybind11::module_& module);

// SessionOptions from config entries and fixed input shapes; StatusError for a refused entry.
SessionOptions sessionOptionsFrom(const std::map<std::string, std::string>& config,
                                  const std::map<std::string, std::vector<int64_t>>& inputShapes);

}  // namespace kiln::python
