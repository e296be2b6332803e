"""Building blocks of the generated opset 18-23 cases: one small model and its inputs per case.

A case is written in the layout of ONNX's node tests (model.onnx + test_data_set_0/input_K.pb), so `kiln conformance`
runs it; the expected outputs (output_K.pb) come from onnxruntime-node, not from this file.

Models are built with onnx.helper and never checked: Debian 12's onnx 1.12 knows no schema past opset 17, so the
opset import is set by hand and onnxruntime (whose onnx is newer) is the one that validates them.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# TensorProto.DataType numbers onnx 1.12 does not name yet (IR version 10).
UINT4 = 21
INT4 = 22
FLOAT8E4M3FN = 17

_NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.uint32): TensorProto.UINT32, np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint64): TensorProto.UINT64, np.dtype(np.bool_): TensorProto.BOOL,
}


def onnx_type(array: np.ndarray) -> int:
    return _NP_TO_ONNX[array.dtype]


def rng(name: str) -> np.random.Generator:
    """A generator seeded by the case name, so a case's data never depends on which other cases were built."""
    return np.random.default_rng(zlib.crc32(name.encode()))


@dataclass
class Const:
    """A node input held as an initializer (a constant the model carries)."""
    name: str
    value: np.ndarray


@dataclass
class Int4Const:
    """An int4/uint4 initializer: `values` (int8/uint8 numbers in range) packed two per byte, low nibble first."""
    name: str
    values: np.ndarray
    signed: bool = True

    def proto(self) -> TensorProto:
        flat = self.values.astype(np.int64).reshape(-1)
        lo, hi = (-8, 7) if self.signed else (0, 15)
        assert flat.size == 0 or (flat.min() >= lo and flat.max() <= hi), "int4 value out of range"
        nibbles = (flat & 0xF).astype(np.uint8)
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        packed = (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8)
        t = TensorProto()
        t.name = self.name
        t.data_type = INT4 if self.signed else UINT4
        t.dims.extend(self.values.shape)
        t.raw_data = packed.tobytes()
        return t


@dataclass
class Case:
    name: str              # test_<op>_<variant>_opset<N>: also the case folder's name
    opset: int
    op: str
    model: object          # onnx.ModelProto
    inputs: list = field(default_factory=list)  # [(graph input name, array)] in graph-input order
    domain: str = ""       # "" = ai.onnx; "com.microsoft" for onnxruntime's contrib operators (opset 1 of it)

    @property
    def group(self):
        """The summary row the case counts in: its ai.onnx opset, or its domain."""
        return self.domain or self.opset


def _value_info(name: str, elem_type: int, shape=None):
    return helper.make_tensor_value_info(name, elem_type, shape)


def graph_case(op: str, opset: int, variant: str, nodes: list, inputs: list, outputs: list,
               ir_version: int = 10, domain: str = "") -> Case:
    """A case from several nodes. `inputs`: (name, array) graph inputs, Const or Int4Const initializers;
    `outputs`: (name, elem_type) graph outputs; `domain` imports that domain at version 1 beside ai.onnx `opset`
    (the case is then named test_<domain's short name>_<op>_<variant>)."""
    name = f"test_{op.lower()}_{variant}_opset{opset}" if not domain else \
        f"test_{domain.split('.')[-1]}_{op.lower()}_{variant}"
    graph_inputs, feeds, inits = [], [], []
    for entry in inputs:
        if isinstance(entry, Const):
            inits.append(numpy_helper.from_array(entry.value, entry.name))
        elif isinstance(entry, Int4Const):
            inits.append(entry.proto())
        else:
            input_name, array = entry
            graph_inputs.append(_value_info(input_name, onnx_type(array), list(array.shape)))
            feeds.append((input_name, array))
    graph = helper.make_graph(nodes, name, graph_inputs, [_value_info(n, t) for n, t in outputs], initializer=inits)
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports, producer_name="kiln-opset-cases")
    model.ir_version = ir_version
    return Case(name, opset, op, model, feeds, domain)


def single(op: str, opset: int, variant: str, inputs: list, attrs: dict | None = None, outputs=1,
           out_types: list | None = None, domain: str = "") -> Case:
    """A one-node case. `inputs` as graph_case's, with None for an omitted optional input; `outputs` is a count
    (names y0, y1, ...) or a list of names where "" omits an optional output; out_types default to input 0's type."""
    names = []
    for i, entry in enumerate(inputs):
        if entry is None:
            names.append("")
        elif isinstance(entry, (Const, Int4Const)):
            names.append(entry.name)
        else:
            names.append(entry[0])
    out_names = [f"y{k}" for k in range(outputs)] if isinstance(outputs, int) else list(outputs)
    first = next(e for e in inputs if e is not None)
    first_type = onnx_type(first.value if isinstance(first, Const) else first[1]) if not isinstance(first, Int4Const) \
        else TensorProto.FLOAT
    present = [n for n in out_names if n]
    types = out_types or [first_type] * len(present)
    node = helper.make_node(op, names, out_names, domain=domain or None, **(attrs or {}))
    return graph_case(op, opset, variant, [node], [e for e in inputs if e is not None], list(zip(present, types)),
                      domain=domain)


def floats(r: np.random.Generator, *shape, dtype=np.float32, scale: float = 1.0) -> np.ndarray:
    return (r.standard_normal(shape) * scale).astype(dtype)


def ints(r: np.random.Generator, lo: int, hi: int, *shape, dtype=np.int64) -> np.ndarray:
    return r.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
