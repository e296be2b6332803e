"""OrtValue and IOBinding with onnxruntime's API shape: values that stay on the device between runs.

    binding = session.io_binding()
    binding.bind_cpu_input("input_ids", ids)
    binding.bind_output("present.0.key", "vulkan")   # stays in Vulkan memory
    binding.bind_output("logits")                    # "cpu": read back
    session.run_with_iobinding(binding)
    present = binding.get_outputs()[0]               # an OrtValue on the device
    binding.bind_ortvalue_input("past.0.key", present)   # the next step reads it in place
"""

from . import _kiln
from ._session import ONNX_TYPE_NAMES

# onnxruntime's device_type strings that mean host memory; any other ("vulkan", "gpu", "cuda", "dml") means the
# device memory of the EP that computes the output.
_HOST_DEVICE_TYPES = {"cpu", "cpu_input", "cpu_output"}


# ONNX TensorProto.DataType -> NumPy dtype name, for OrtValue.element_type().
_NUMPY_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
                10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128"}


def _place(device_type):
    return _kiln.OutputPlace.HOST if str(device_type).lower() in _HOST_DEVICE_TYPES else _kiln.OutputPlace.DEVICE


class OrtValue:
    """A tensor in host memory or in an execution provider's device memory (onnxruntime.OrtValue)."""

    def __init__(self, native):
        self._native = native

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        """An OrtValue holding a copy of the array in host memory (device_type must be "cpu": Kiln places values
        on a device only as outputs of a run, through IOBinding)."""
        if str(device_type).lower() != "cpu":
            raise ValueError(f"OrtValue.ortvalue_from_numpy: device_type {device_type!r} is not supported: Kiln "
                             "creates device values as run outputs (IOBinding.bind_output(name, 'vulkan'))")
        return OrtValue(_kiln.Tensor.from_numpy(numpy_obj))

    def numpy(self):
        """The values as a NumPy array (read back from the device for a device value)."""
        return self._native.numpy()

    def shape(self):
        return list(self._native.shape)

    def data_type(self):
        return f"tensor({ONNX_TYPE_NAMES.get(self._native.dtype, 'undefined')})"

    def element_type(self):
        """The NumPy scalar type of the elements (numpy.float32, ...), without reading the values."""
        import numpy
        return numpy.dtype(_NUMPY_NAMES.get(self._native.dtype, "object")).type

    def device_name(self):
        """"cpu", or "vulkan" for a value in Vulkan device memory."""
        return "vulkan" if self._native.is_on_device else "cpu"

    def location(self):
        """Kiln's own: where the bytes are, e.g. "VulkanExecutionProvider:0 (llvmpipe ...)"."""
        return self._native.location

    def is_tensor(self):
        return True

    def has_value(self):
        return True


class IOBinding:
    """onnxruntime.IOBinding: the inputs of the next runs and where their outputs go."""

    def __init__(self, session):
        self._session = session
        self._native = _kiln.IoBinding()

    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds a NumPy array (copied, so later changes to the array do not reach the run)."""
        self._native.bind_input(name, _kiln.Tensor.from_numpy(arr_on_cpu))

    def bind_ortvalue_input(self, name, ortvalue):
        """Binds an OrtValue; a device value of the session's device is read in place."""
        self._native.bind_input(name, ortvalue._native)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        raise NotImplementedError("IOBinding.bind_input with a raw buffer pointer is not supported by Kiln: use "
                                  "bind_cpu_input or bind_ortvalue_input")

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Asks for output `name`: device_type "cpu" reads it back to host memory, any other ("vulkan") leaves it
        in the device memory of the EP that computes it. Preallocated buffers are not supported."""
        if buffer_ptr is not None:
            raise NotImplementedError("IOBinding.bind_output into a preallocated buffer is not supported by Kiln")
        self._native.bind_output(name, _place(device_type))

    def bind_ortvalue_output(self, name, ortvalue):
        raise NotImplementedError("IOBinding.bind_ortvalue_output (a preallocated output) is not supported by Kiln: "
                                  "use bind_output(name, device_type)")

    def get_outputs(self):
        """The last run's outputs as OrtValues, in the order bound."""
        return [OrtValue(tensor) for _, tensor in self._native.outputs()]

    def copy_outputs_to_cpu(self):
        """The last run's outputs as NumPy arrays (device values read back)."""
        return [tensor.numpy() for _, tensor in self._native.outputs()]

    def get_output_names(self):
        return [name for name, _ in self._native.outputs()]

    def clear_binding_inputs(self):
        self._native.clear_bound_inputs()

    def clear_binding_outputs(self):
        self._native.clear_bound_outputs()

    def synchronize_inputs(self):
        """Kiln's runs copy and wait themselves: nothing to do."""

    def synchronize_outputs(self):
        """Kiln's runs copy and wait themselves: nothing to do."""
