// The _kiln extension module: the engine's public API (engine/include/kiln) for the kiln Python package. The
// onnxruntime-shaped classes live in Python (kiln/*.py) on top of it; this module only converts and forwards.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "status_error.h"

PYBIND11_MODULE(_kiln, module) {
  module.doc() = "Kiln engine bindings (use the kiln package, not this module)";
  kiln::python::registerStatusErrors();
  kiln::python::bindIoBinding(module);
  kiln::python::bindSession(module);
  kiln::python::bindCompile(module);
  kiln::python::bindTools(module);
  kiln::python::bindCompare(module);
  kiln::python::bindPackage(module);
}
