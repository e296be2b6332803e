"""NumPy round trips through Identity for every tensor type Kiln runs, and the input layouts NumPy can hand over."""

import numpy as np
import pytest
from onnx import TensorProto

import kiln
from conftest import CPU, ROUND_TRIP_TYPES


def sample(dtype):
    if dtype is np.object_:
        return np.array([["a", "bé", ""], ["long string " * 8, "x", "日本"]], dtype=object)
    if dtype is np.bool_:
        return np.array([[True, False, True], [False, False, True]])
    if np.issubdtype(dtype, np.floating):
        return (np.arange(6).reshape(2, 3) * 0.25 - 0.5).astype(dtype)
    info = np.iinfo(dtype)
    return np.array([[info.min, 0, 1], [info.max, 2, info.max - 1]], dtype=dtype)


@pytest.mark.parametrize("elem_type", list(ROUND_TRIP_TYPES), ids=lambda t: TensorProto.DataType.Name(t).lower())
def test_identity_round_trip(models, elem_type):
    name = TensorProto.DataType.Name(elem_type).lower()
    dtype = ROUND_TRIP_TYPES[elem_type]
    session = kiln.InferenceSession(models[name], providers=CPU)
    assert session.get_inputs()[0].type == f"tensor({name})"
    value = sample(dtype)
    (result,) = session.run(None, {"x": value})
    assert result.dtype == value.dtype and result.shape == value.shape
    np.testing.assert_array_equal(result, value)


def test_strings_from_unicode_and_bytes_arrays(models):
    session = kiln.InferenceSession(models["string"], providers=CPU)
    (from_unicode,) = session.run(None, {"x": np.array([["a", "b", "c"]])})
    (from_bytes,) = session.run(None, {"x": np.array([[b"a", b"b", b"c"]])})
    assert from_unicode.tolist() == from_bytes.tolist() == [["a", "b", "c"]]


def test_non_contiguous_byte_swapped_and_list_inputs(models):
    session = kiln.InferenceSession(models["float"], providers=CPU)
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = base[:, ::2]  # not C-contiguous: copied
    np.testing.assert_array_equal(session.run(None, {"x": strided})[0], strided)
    swapped = strided.astype(">f4")
    np.testing.assert_array_equal(session.run(None, {"x": swapped})[0], strided)
    assert session.run(None, {"x": np.zeros((0, 3), np.float32)})[0].shape == (0, 3)
    with pytest.raises(kiln.InvalidArgument, match="float32"):  # a list of Python floats is float64, as in onnxruntime
        session.run(None, {"x": [[1.0, 2.0, 3.0]]})
    as_list = kiln.InferenceSession(models["int64"], providers=CPU).run(None, {"x": [[1, 2, 3]]})[0]
    assert as_list.dtype == np.int64 and as_list.tolist() == [[1, 2, 3]]


def test_outputs_outlive_the_session(models):
    session = kiln.InferenceSession(models["int64"], providers=CPU)
    value = np.arange(9, dtype=np.int64).reshape(3, 3)
    (result,) = session.run(None, {"x": value})
    del session
    np.testing.assert_array_equal(result, value)
    result[0, 0] = 42  # the array owns (shares) its storage: writable, no crash
