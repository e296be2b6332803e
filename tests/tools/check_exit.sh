#!/bin/sh
# Runs a test's command and passes its exit status on. A ctest entry with PASS_REGULAR_EXPRESSION ignores the exit
# status, so a non-zero one also prints "check_exit: ... exited with status N", which the entry's
# FAIL_REGULAR_EXPRESSION (KILN_EXIT_FAILURE_REGEX in tests/CMakeLists.txt) turns into a failure.
"$@"
status=$?
[ "$status" -eq 0 ] || echo "check_exit: '$1' exited with status $status"
exit "$status"
