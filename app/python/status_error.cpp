#include "status_error.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace kiln::python {

void throwIfError(const Status& status) {
  if (!status.isOk()) throw StatusError(status);
}

void registerStatusErrors() {
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const StatusError& error) {
      // kiln._errors.error_for(code, name, message) builds the exception instance of the right class.
      py::object errors = py::module_::import("kiln._errors");
      const Status& status = error.status();
      py::object instance = errors.attr("error_for")(static_cast<int>(status.code()),
                                                     statusCodeName(status.code()), status.message());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr())), instance.ptr());
    }
  });
}

}  // namespace kiln::python
