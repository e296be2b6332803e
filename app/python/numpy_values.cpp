#include "numpy_values.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

struct TypePair {
  DataType kiln;
  char kind;  // NumPy dtype.kind
  int itemsize;
};
constexpr TypePair kTypes[] = {
    {DataType::FLOAT, 'f', 4},  {DataType::DOUBLE, 'f', 8}, {DataType::FLOAT16, 'f', 2},
    {DataType::INT8, 'i', 1},   {DataType::INT16, 'i', 2},  {DataType::INT32, 'i', 4},
    {DataType::INT64, 'i', 8},  {DataType::UINT8, 'u', 1},  {DataType::UINT16, 'u', 2},
    {DataType::UINT32, 'u', 4}, {DataType::UINT64, 'u', 8}, {DataType::BOOL, 'b', 1},
};

Status unsupportedType(const std::string& name, const std::string& what) {
  return Status(StatusCode::INVALID_ARGUMENT,
                "input '" + name + "': NumPy arrays of " + what + " have no ONNX tensor type Kiln runs");
}

Shape shapeOf(const py::array& array) { return Shape(array.shape(), array.shape() + array.ndim()); }

Tensor stringTensor(const py::array& array) {
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(array.size()));
  py::object flat = array.attr("ravel")();
  for (const py::handle item : flat) {
    if (py::isinstance<py::bytes>(item)) {
      values.push_back(item.cast<std::string>());
    } else {
      values.push_back(py::str(item).cast<std::string>());
    }
  }
  return Tensor::fromStrings(shapeOf(array), std::move(values));
}

// Owns a reference to the array whose memory a wrapped tensor uses; dropped with the GIL held, from any
// thread.
std::shared_ptr<std::byte> borrowArrayMemory(const py::array& array) {
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  auto* data = static_cast<std::byte*>(const_cast<void*>(array.data()));
  return std::shared_ptr<std::byte>(data, [owner](std::byte*) {
    py::gil_scoped_acquire gil;
    Py_DECREF(owner);
  });
}

}  // namespace

DataType dataTypeOfNumpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  if (kind == 'U' || kind == 'S' || kind == 'O') return DataType::STRING;
  for (const TypePair& pair : kTypes) {
    if (pair.kind == kind && pair.itemsize == static_cast<int>(dtype.itemsize())) return pair.kiln;
  }
  return DataType::UNDEFINED;
}

Tensor tensorFromPython(const py::handle& object, const std::string& name) {
  py::array array = py::module_::import("numpy").attr("asarray")(object);
  const DataType type = dataTypeOfNumpy(array.dtype());
  if (type == DataType::UNDEFINED)
    throwIfError(unsupportedType(name, py::str(array.dtype()).cast<std::string>()));
  if (type == DataType::STRING) return stringTensor(array);
  const bool aligned =
      reinterpret_cast<uintptr_t>(array.data()) % static_cast<uintptr_t>(array.itemsize()) == 0;
  if (!(array.flags() & py::array::c_style) || !aligned || !array.dtype().attr("isnative").cast<bool>()) {
    array = py::module_::import("numpy").attr("ascontiguousarray")(array,
                                                                   array.dtype().attr("newbyteorder")("="));
  }
  if (array.size() == 0) return Tensor(type, shapeOf(array));
  return Tensor::wrap(type, shapeOf(array), borrowArrayMemory(array));
}

Value valueFromPython(const py::handle& object, const ValueMetadata& meta) {
  if (meta.kind == ValueKind::OPTIONAL && object.is_none()) return Value::none();
  if (meta.kind == ValueKind::SEQUENCE ||
      (meta.kind == ValueKind::OPTIONAL && py::isinstance<py::list>(object))) {
    std::vector<Tensor> tensors;
    for (const py::handle item : object) tensors.push_back(tensorFromPython(item, meta.name));
    Value sequence = Value::sequence(meta.dtype, std::move(tensors));
    return meta.kind == ValueKind::OPTIONAL ? Value::optional(sequence) : sequence;
  }
  Value tensor(tensorFromPython(object, meta.name));
  return meta.kind == ValueKind::OPTIONAL ? Value::optional(tensor) : tensor;
}

py::object tensorToPython(const Tensor& tensor) {
  if (tensor.isOnDevice()) {
    Result<Tensor> host = Status(StatusCode::FAIL, "not read");
    {
      py::gil_scoped_release release;
      host = tensor.toHost();
    }
    return tensorToPython(valueOrThrow(std::move(host)));
  }
  const std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.dtype() == DataType::STRING) {
    py::array result = py::module_::import("numpy").attr("empty")(shape, "object");
    py::object flat = result.attr("reshape")(-1);
    for (int64_t i = 0; i < tensor.numel(); ++i) flat[py::int_(i)] = py::str(tensor.strings()[i]);
    return result;
  }
  std::string format;
  for (const TypePair& pair : kTypes) {
    if (pair.kiln == tensor.dtype()) format = std::string(1, pair.kind) + std::to_string(pair.itemsize);
  }
  if (format == "b1") format = "bool";
  if (format.empty()) {
    throwIfError(
        Status(StatusCode::NOT_IMPLEMENTED,
               std::string("outputs of type ") + dataTypeName(tensor.dtype()) + " have no NumPy type"));
  }
  py::dtype dtype = py::dtype(format);
  if (tensor.numel() == 0 || !tensor.rawData()) return py::array(dtype, shape);
  // The capsule keeps a copy of the tensor (shared storage) alive as long as the array.
  auto* keeper = new Tensor(tensor);
  py::capsule base(keeper, [](void* pointer) { delete static_cast<Tensor*>(pointer); });
  return py::array(dtype, shape, {}, keeper->rawData(), base);
}

py::object valueToPython(const Value& value) {
  if (value.isTensor()) return tensorToPython(value.tensor());
  if (value.isSequence()) {
    py::list items;
    for (const Tensor& tensor : value.tensors()) items.append(tensorToPython(tensor));
    return items;
  }
  if (value.isOptional()) return value.hasElement() ? valueToPython(value.element()) : py::none();
  return py::none();
}

}  // namespace kiln::python
