"""A script written for onnxruntime, using only the API Kiln shares with it. test_dropin.py runs it unchanged with
`onnxruntime` resolving to kiln. Usage: ort_script.py MODEL"""

import sys

import numpy as np
import onnxruntime as ort

model_path = sys.argv[1]
ort.set_default_logger_severity(3)
print("available:", ort.get_available_providers())

so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.intra_op_num_threads = 2
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.add_session_config_entry("session.intra_op.allow_spinning", "0")
so.log_severity_level = 3

sess = ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])
inp = sess.get_inputs()[0]
print("input:", inp.name, inp.type, inp.shape)
shape = [d if isinstance(d, int) else 1 for d in inp.shape]
x = np.random.rand(*shape).astype(np.float32)

ro = ort.RunOptions()
ro.log_severity_level = 3
outputs = sess.run(None, {inp.name: x}, ro)
names = [o.name for o in sess.get_outputs()]
again = sess.run([names[0]], {inp.name: x})
assert np.array_equal(outputs[0], again[0])
print("outputs:", {n: o.shape for n, o in zip(names, outputs)})
print("providers:", sess.get_providers())
sess.set_providers(["CPUExecutionProvider"])
assert np.array_equal(sess.run(None, {inp.name: x})[0], outputs[0])
meta = sess.get_modelmeta()
print("producer:", meta.producer_name, meta.custom_metadata_map)

with open(model_path, "rb") as f:
    from_bytes = ort.InferenceSession(f.read(), providers=["CPUExecutionProvider"])
assert np.allclose(from_bytes.run(None, {inp.name: x})[0], outputs[0])

try:
    sess.run(None, {inp.name: x.astype(np.float64)})
    raise SystemExit("a float64 feed to a float input should fail")
except Exception as error:  # onnxruntime raises InvalidArgument (a RuntimeError)
    print("bad feed:", type(error).__name__)
print("OK")
