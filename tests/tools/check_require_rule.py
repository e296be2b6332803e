#!/usr/bin/python3
"""The KILN_REQUIRE_* rule has one Python home: no tests/**/*.py but tests/support/kiln_requirements.py reads a
KILN_REQUIRE_ variable from the environment itself. The others ask kiln_requirements.required(kind) or call
skip_or_fail / skip_or_fail_pytest, so "exactly 1 requires, anything else skips" cannot drift (requirements.h is
the C++ side).
A read is a key naming a KILN_REQUIRE_ variable (a string, or an f-string or concatenation that starts with
KILN_REQUIRE_) given to .get(...) or getenv(...), subscripted (env[...], not an assignment to it) or tested with
`in`, whatever the mapping. Docstrings, comments and messages that mention the names are fine, and so is setting one
for a child process ({**os.environ, "KILN_REQUIRE_VULKAN": "1"}).

Usage: check_require_rule.py SOURCE_DIR | --self-test
"""
import ast
import pathlib
import sys
import tempfile

import guard_cli

HELPER = "tests/support/kiln_requirements.py"
PREFIX = "KILN_REQUIRE_"


def names_a_requirement(node):
    """True for "KILN_REQUIRE_...", f"KILN_REQUIRE_{kind}" and "KILN_REQUIRE_" + kind."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.startswith(PREFIX)
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and names_a_requirement(node.values[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return names_a_requirement(node.left)
    return False


def reads(tree):
    """(line, what) of each read of a KILN_REQUIRE_ variable in a parsed file."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and names_a_requirement(node.args[0]):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in ("get", "getenv"):
                found.append((node.lineno, f"{name}({ast.unparse(node.args[0])})"))
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
              and names_a_requirement(node.slice)):
            found.append((node.lineno, f"[{ast.unparse(node.slice)}]"))
        elif (isinstance(node, ast.Compare) and names_a_requirement(node.left)
              and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)):
            found.append((node.lineno, ast.unparse(node)))
    return found


def check(root):
    problems = []
    for path in sorted((root / "tests").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == HELPER or "__pycache__" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(errors="replace"), filename=relative)
        except SyntaxError as error:
            problems.append(f"{relative}:{error.lineno}: cannot parse it ({error.msg})")
            continue
        for line, what in sorted(reads(tree)):
            problems.append(f"{relative}:{line}: reads a {PREFIX} variable itself ({what}); use {HELPER}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as folder:
        root = pathlib.Path(folder)
        for sub in ("tests/support", "tests/cli", "tests/python"):
            (root / sub).mkdir(parents=True)
        (root / HELPER).write_text('import os\nok = os.environ.get("KILN_REQUIRE_VULKAN") == "1"\n')
        (root / "tests/cli/ok.py").write_text(
            '"""Exit 77 unless os.environ.get("KILN_REQUIRE_VULKAN") == "1"."""\n'
            'import os  # os.environ["KILN_REQUIRE_MODELS"] in a comment\n'
            'print("FAIL: no Vulkan device (KILN_REQUIRE_VULKAN=1)")\n'
            'env = {**os.environ, "KILN_REQUIRE_VULKAN": "1"}\n'
            'env["KILN_REQUIRE_MODELS"] = "1"\n'
            'os.environ.get("KILN_MODEL_CACHE")\n')
        (root / "tests/cli/bad.py").write_text(
            'import os\n'
            'if os.environ.get("KILN_REQUIRE_VULKAN") == "1":\n'
            '    pass\n'
            'models = os.environ["KILN_REQUIRE_MODELS"]\n'
            'slurm = "KILN_REQUIRE_SLURM" not in os.environ\n')
        (root / "tests/python/bad.py").write_text(
            'from os import getenv\n'
            'def required(kind):\n'
            '    return getenv(f"KILN_REQUIRE_{kind}") == "1" or getenv("KILN_REQUIRE_" + kind) == "1"\n')
        found = check(root)
        expected = ["tests/cli/bad.py:2:", "tests/cli/bad.py:4:", "tests/cli/bad.py:5:", "tests/python/bad.py:3:",
                    "tests/python/bad.py:3:"]
        if sorted(p.split(" ")[0] for p in found) != sorted(expected):
            print("self-test FAILED:", *found, sep="\n  ")
            return 1
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(guard_cli.main(check, self_test, __doc__))
