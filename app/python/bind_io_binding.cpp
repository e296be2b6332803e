// _kiln.Tensor and _kiln.IoBinding: the native half of kiln.OrtValue and kiln.IOBinding (kiln/_io_binding.py).
// A Tensor may be a device tensor (an output bound to the device); numpy() reads it back.
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "bindings.h"
#include "kiln/io_binding.h"
#include "numpy_values.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {

void bindIoBinding(py::module_& module) {
  py::class_<Tensor>(module, "Tensor")
      .def_static(
          "from_numpy",
          [](const py::handle& array) {
            // A copy in engine memory: a binding may hold it across runs and threads, independent of the array.
            return tensorFromPython(array, "bound value").clone();
          },
          py::arg("array"))
      .def("numpy", [](const Tensor& tensor) { return tensorToPython(tensor); })
      .def_property_readonly("shape", [](const Tensor& tensor) { return tensor.shape(); })
      .def_property_readonly("dtype", [](const Tensor& tensor) { return static_cast<int>(tensor.dtype()); })
      .def_property_readonly("location", &Tensor::location)
      .def_property_readonly("is_on_device", &Tensor::isOnDevice);

  py::enum_<OutputPlace>(module, "OutputPlace").value("HOST", OutputPlace::HOST).value("DEVICE", OutputPlace::DEVICE);

  py::class_<IoBinding>(module, "IoBinding")
      .def(py::init<>())
      .def("bind_input", &IoBinding::bindInput, py::arg("name"), py::arg("tensor"))
      .def("bind_output", &IoBinding::bindOutput, py::arg("name"), py::arg("place"))
      .def("clear_bound_inputs", &IoBinding::clearBoundInputs)
      .def("clear_bound_outputs", &IoBinding::clearBoundOutputs)
      .def("bound_output_names",
           [](const IoBinding& binding) {
             std::vector<std::string> names;
             for (const auto& bound : binding.boundOutputs()) names.push_back(bound.first);
             return names;
           })
      .def("outputs", [](const IoBinding& binding) {
        std::vector<std::pair<std::string, Tensor>> result;
        for (const auto& output : binding.outputs()) result.emplace_back(output.name, output.tensor);
        return result;
      });
}

}  // namespace kiln::python
