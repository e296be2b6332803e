#!/usr/bin/python3
"""int8 models on the Vulkan EP, end to end through the CLI: a QDQ model as onnxruntime's static quantizer writes it
(QuantizeLinear/DequantizeLinear around Conv with per-channel int8 weights and an int32 bias, Relu, MaxPool, Add,
MatMul) and a dynamically quantized conv net as its dynamic quantizer writes it (DynamicQuantizeLinear + ConvInteger /
MatMulInteger + Cast + Mul), both generated here with python onnx. `kiln partition MODEL --ep vulkan,cpu --json`
must put every node on Vulkan in one partition, and `kiln compare` against the CPU EP must pass: bit for bit for the
dynamic net (every step is integer or one correctly rounded float operation), within one quantization step of the
output for the QDQ model (its float Conv/MatMul between the pairs sum in another order on the device).
Exits 77 (skipped) without a Vulkan device unless KILN_REQUIRE_VULKAN=1.
Usage: int8_vulkan.py KILN_BINARY
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402

failures = 0
QDQ_OUTPUT_SCALE = 0.05


def kiln(*args):
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def save(path, nodes, inits, x_shape):
    graph = helper.make_graph(nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def dynamic_conv_net(path, rng):
    inits = [init("w1", rng.integers(0, 256, (8, 3, 3, 3), dtype=np.uint8)), init("w1z", np.uint8(127)),
             init("w1s", np.float32(0.0041)), init("b1", rng.uniform(-0.5, 0.5, (1, 8, 1, 1)).astype(np.float32)),
             init("w2", rng.integers(-128, 128, (4, 8, 3, 3), dtype=np.int8)),
             init("w2z", np.array([0, 1, -1, 3], np.int8)), init("w2s", np.float32(0.0027)),
             init("flat", np.array([1, 1024], np.int64)),
             init("wm", rng.integers(0, 256, (1024, 10), dtype=np.uint8)), init("wmz", np.uint8(130)),
             init("wms", np.float32(0.0013))]
    node = helper.make_node
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             node("ConvInteger", ["xq", "w1", "xz", "w1z"], ["c1i"], pads=[1, 1, 1, 1]),
             node("Cast", ["c1i"], ["c1f"], to=TensorProto.FLOAT),
             node("Mul", ["xs", "w1s"], ["s1"]), node("Mul", ["c1f", "s1"], ["c1m"]),
             node("Add", ["c1m", "b1"], ["c1"]), node("Relu", ["c1"], ["r1"]),
             node("DynamicQuantizeLinear", ["r1"], ["rq", "rs", "rz"]),
             node("ConvInteger", ["rq", "w2", "rz", "w2z"], ["c2i"], strides=[2, 2], pads=[1, 1, 1, 1]),
             node("Cast", ["c2i"], ["c2f"], to=TensorProto.FLOAT),
             node("Mul", ["rs", "w2s"], ["s2"]), node("Mul", ["c2f", "s2"], ["c2"]),
             node("Reshape", ["c2", "flat"], ["f"]),
             node("DynamicQuantizeLinear", ["f"], ["fq", "fs", "fz"]),
             node("MatMulInteger", ["fq", "wm", "fz", "wmz"], ["mi"]),
             node("Cast", ["mi"], ["mf"], to=TensorProto.FLOAT),
             node("Mul", ["fs", "wms"], ["sm"]), node("Mul", ["mf", "sm"], ["y"])]
    return save(path, nodes, inits, [1, 3, 32, 32])


def qdq_model(path, rng):
    nodes, inits = [], []

    def qdq(inp, out, scale, zero):
        inits.extend([init(out + "_s", np.float32(scale)), init(out + "_z", np.uint8(zero))])
        nodes.append(helper.make_node("QuantizeLinear", [inp, out + "_s", out + "_z"], [out + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [out + "_q", out + "_s", out + "_z"], [out]))

    def weight(name, shape, axis):
        scales = (0.002 + 0.0005 * np.arange(shape[axis])).astype(np.float32)
        inits.extend([init(name + "_q", rng.integers(-127, 128, shape, dtype=np.int8)), init(name + "_s", scales),
                      init(name + "_z", np.zeros(shape[axis], np.int8))])
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name], axis=axis))
        return scales

    qdq("x", "xd", 0.02, 128)
    w1_scales = weight("w1", (8, 3, 3, 3), 0)
    inits.extend([init("b1_q", rng.integers(-3000, 3000, 8, dtype=np.int32)),
                  init("b1_s", (np.float32(0.02) * w1_scales).astype(np.float32))])
    nodes.append(helper.make_node("DequantizeLinear", ["b1_q", "b1_s"], ["b1"], axis=0))
    nodes.append(helper.make_node("Conv", ["xd", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]))
    qdq("c1", "c1d", 0.04, 120)
    nodes.append(helper.make_node("Relu", ["c1d"], ["r1"]))
    qdq("r1", "r1d", 0.03, 0)
    nodes.append(helper.make_node("MaxPool", ["r1d"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    qdq("p1", "p1d", 0.03, 0)
    weight("w2", (8, 8, 1, 1), 0)
    nodes.append(helper.make_node("Conv", ["p1d", "w2"], ["c2"]))
    qdq("c2", "c2d", 0.02, 128)
    nodes.append(helper.make_node("Add", ["p1d", "c2d"], ["a"]))
    qdq("a", "ad", 0.04, 100)
    inits.append(init("flat", np.array([1, 8 * 16 * 16], np.int64)))
    nodes.append(helper.make_node("Reshape", ["ad", "flat"], ["f"]))
    weight("wm", (8 * 16 * 16, 10), 1)
    nodes.append(helper.make_node("MatMul", ["f", "wm"], ["mm"]))
    qdq("mm", "y", QDQ_OUTPUT_SCALE, 128)
    return save(path, nodes, inits, [1, 3, 32, 32])


def check(model, atol):
    code, out, err = kiln("partition", model, "--ep", "vulkan,cpu", "--json")
    summary = json.loads(out).get("summary", {}) if code == 0 and out else {}
    per_ep = summary.get("nodes_per_execution_provider", {})
    expect(code == 0 and list(per_ep) == ["VulkanExecutionProvider"] and summary.get("partitions") == 1,
           f"{model.name}: every node on Vulkan in one partition ({code}: {summary} {err.strip()})")
    code, out, err = kiln("compare", model, "--ep", "vulkan", "--against-ep", "cpu", "--atol", atol, "--rtol", "0",
                          "--seed", "3", "--json", "-q")
    report = json.loads(out) if out else {}
    expect(code == 0 and report.get("passed") is True,
           f"{model.name}: Vulkan equals the CPU EP within atol {atol} ({code}: {out.strip()} {err.strip()})")


def main():
    global KILN
    KILN = sys.argv[1]
    code, out, _ = kiln("devices", "--json")
    if code != 0 or not json.loads(out).get("devices"):
        skip_or_fail("VULKAN", "no Vulkan device")
    rng = np.random.default_rng(20)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        check(dynamic_conv_net(tmp / "dynamic_conv_net.onnx", rng), 0)
        check(qdq_model(tmp / "qdq_model.onnx", rng), QDQ_OUTPUT_SCALE * 1.001)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
