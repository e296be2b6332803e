# Conformance over Debian's libonnx-testdata node cases: 0 unexpected failures on the CPU EP and at least 880 passing
# (issue 8; 917 did when this was set, onnxruntime 1.30 passes 859).
add_test(NAME conformance_cpu
  COMMAND kiln conformance --ep cpu --min-passed 880 /usr/share/libonnx-testdata/data/node)
set_tests_properties(conformance_cpu PROPERTIES ENVIRONMENT "${KILN_TEST_ENV}" TIMEOUT 1800)

# The Vulkan EP over the same cases: a case counts only when every node runs on Vulkan (session created with
# session.disable_cpu_ep_fallback=1), otherwise it is skipped; at least 500 must pass with 0 unexpected failures (515 did when this was set; the issue asks for 250).
# Needs a Vulkan device (lavapipe in CI): `ctest -LE vulkan` leaves it out.
add_test(NAME conformance_vulkan
  COMMAND kiln conformance --ep vulkan --min-passed 500 /usr/share/libonnx-testdata/data/node)
set_tests_properties(conformance_vulkan PROPERTIES ENVIRONMENT "${KILN_TEST_ENV}" TIMEOUT 1800 LABELS vulkan)
