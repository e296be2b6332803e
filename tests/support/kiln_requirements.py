"""What a Python test may skip, and when it must fail instead: the one place the test scripts ask (the twin of
requirements.h). KILN_REQUIRE_VULKAN=1 (CI, where lavapipe is always installed) turns "no Vulkan device" into a
failure, KILN_REQUIRE_MODELS=1 "real model or onnxruntime-node not cached", KILN_REQUIRE_SLURM=1 "no Slurm". Without
the variable a test skips: exit 77 (ctest's SKIP_RETURN_CODE), or pytest.skip. Standard library only.

A script imports it from tests/support, the same two lines everywhere:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
    from kiln_requirements import required, skip_or_fail  # noqa: E402

Usage: kiln_requirements.py --self-test
"""
import contextlib
import io
import os
import sys

SKIPPED = 77  # ctest's SKIP_RETURN_CODE
KINDS = ("VULKAN", "MODELS", "SLURM")


def variable(kind):
    """KILN_REQUIRE_<kind>, for a kind in KINDS."""
    if kind not in KINDS:
        raise ValueError(f"unknown requirement {kind!r} (one of {', '.join(KINDS)})")
    return f"KILN_REQUIRE_{kind}"


def required(kind):
    """True when KILN_REQUIRE_<kind> is exactly "1" (requirements.h's envFlag): a missing <kind> fails the test."""
    return os.environ.get(variable(kind)) == "1"


def failure(kind, message):
    """The failure's text, naming the variable that made it one: "<message> (KILN_REQUIRE_<kind>=1)"."""
    return f"{message} ({variable(kind)}=1)"


def skip_or_fail(kind, message):
    """Prints why and exits: "FAIL: ..." and 1 when required(kind), else "SKIP: <message>" and 77."""
    if required(kind):
        print(f"FAIL: {failure(kind, message)}")
        sys.exit(1)
    print(f"SKIP: {message}")
    sys.exit(SKIPPED)


def skip_or_fail_pytest(kind, message):
    """skip_or_fail for pytest: pytest.fail when required(kind), else pytest.skip (both raise). Not named pytest_*:
    imported into a conftest.py, pytest would take such a name for a hook and refuse the unknown one."""
    import pytest
    if required(kind):
        pytest.fail(failure(kind, message))
    pytest.skip(message)


def _outcome(function, kind):
    """What function(kind, "planted") did, its output swallowed: ("exit", code), ("skipped"|"failed", text) or None."""
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            function(kind, "planted")
        except SystemExit as exit_:
            return "exit", exit_.code
        except BaseException as exception:  # pytest's Skipped and Failed are BaseException, not Exception
            return type(exception).__name__.lower(), str(exception)
    return None


def self_test():
    """Plants each value of each variable: only "1" requires; checks the exit codes, messages and pytest's outcomes."""
    try:
        import pytest  # noqa: F401  Debian python3-pytest; without it the pytest variant goes unchecked
        with_pytest = True
    except ImportError:
        with_pytest = False
    problems = []
    saved = {kind: os.environ.pop(variable(kind), None) for kind in KINDS}
    try:
        for kind in KINDS:
            for value in (None, "1", "0", "true", " 1", "1 ", ""):
                if value is None:
                    os.environ.pop(variable(kind), None)
                else:
                    os.environ[variable(kind)] = value
                must = value == "1"
                if required(kind) != must:
                    problems.append(f"{variable(kind)}={value!r}: required() is {required(kind)}")
                got = _outcome(skip_or_fail, kind)
                if got != ("exit", 1 if must else SKIPPED):
                    problems.append(f"{variable(kind)}={value!r}: skip_or_fail gave {got}")
                if with_pytest:
                    got = _outcome(skip_or_fail_pytest, kind)
                    want = ("failed", failure(kind, "planted")) if must else ("skipped", "planted")
                    if got != want:
                        problems.append(f"{variable(kind)}={value!r}: skip_or_fail_pytest gave {got}")
            os.environ.pop(variable(kind), None)
        if failure("MODELS", "no model") != "no model (KILN_REQUIRE_MODELS=1)":
            problems.append(f"failure(): {failure('MODELS', 'no model')!r}")
        try:
            required("GPU")
            problems.append("an unknown kind is accepted")
        except ValueError:
            pass
    finally:
        for kind, value in saved.items():
            if value is None:
                os.environ.pop(variable(kind), None)
            else:
                os.environ[variable(kind)] = value
    if problems:
        print("self-test FAILED:", *problems, sep="\n  ")
        return 1
    print("self-test passed" + ("" if with_pytest else " (without pytest: skip_or_fail_pytest not checked)"))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--self-test"]:
        print(__doc__)
        sys.exit(2)
    sys.exit(self_test())
