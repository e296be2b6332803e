# Conformance over Debian's libonnx-testdata node cases: 0 unexpected failures on the CPU EP.
add_test(NAME conformance_cpu
  COMMAND kiln conformance --ep cpu /usr/share/libonnx-testdata/data/node)
set_tests_properties(conformance_cpu PROPERTIES ENVIRONMENT "${KILN_TEST_ENV}" TIMEOUT 1800)
