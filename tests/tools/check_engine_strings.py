#!/usr/bin/python3
"""The engine's strings stay the engine's (issue 31: these rules had regressed without a test):
1. No string literal in engine/src names a command-line flag (`--shape`): the library is used from C++, Python and
   the studio, which have no such flags; messages name config keys or API settings, and the CLI translates.
   compare/reproducer.cpp is exempt: it writes a reproducer's `kiln ...` command lines on purpose.
2. No string literal outside engine/include/kiln/provider_names.h spells an execution provider's name
   ("VulkanExecutionProvider", "CPUExecutionProvider"): one source of truth, kiln::kVulkanExecutionProvider and
   kiln::kCpuExecutionProvider. Checked in engine/src, app/bridge, app/common, app/cli and app/studio.

Usage: check_engine_strings.py SOURCE_DIR | --self-test
"""
import pathlib
import re
import sys
import tempfile

import guard_cli

FLAG_EXEMPT = {"engine/src/compare/reproducer.cpp"}
PROVIDER_NAMES = "engine/include/kiln/provider_names.h"
EP_NAME = re.compile(r"(Vulkan|CPU)ExecutionProvider")
FLAG = re.compile(r"(^|[\s(\"'`])--[a-z][a-z0-9-]*")
# A C++ string literal (not raw strings: the engine has none with flags), after comments are removed.
LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def strip_comments(text):
    """Removes // and /* */ comments, keeping string literals (and line numbers) intact."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            chunk = text[i:n if j < 0 else j + 2]
            out.append("\n" * chunk.count("\n"))
            i = n if j < 0 else j + 2
        elif text[i] == '"':
            m = LITERAL.match(text, i)
            end = m.end() if m else i + 1
            out.append(text[i:end])
            i = end
        elif text[i] == "'":  # a character literal ('"' must not open a string)
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def literals(path):
    code = strip_comments(path.read_text(errors="replace"))
    for match in LITERAL.finditer(code):
        yield code.count("\n", 0, match.start()) + 1, match.group(0)


def check(root):
    problems = []
    sources = lambda folder: sorted(p for p in (root / folder).rglob("*") if p.suffix in (".cpp", ".h"))
    for path in sources("engine/src"):
        relative = path.relative_to(root).as_posix()
        if relative in FLAG_EXEMPT:
            continue
        for line, literal in literals(path):
            if FLAG.search(literal[1:-1]):
                problems.append(f"{relative}:{line}: a command-line flag in an engine string: {literal}")
    for folder in ("engine/src", "engine/include", "app/bridge", "app/common", "app/cli", "app/studio"):
        if not (root / folder).is_dir():
            continue
        for path in sources(folder):
            relative = path.relative_to(root).as_posix()
            if relative == PROVIDER_NAMES:
                continue
            for line, literal in literals(path):
                if EP_NAME.search(literal):
                    problems.append(f"{relative}:{line}: an execution provider's name outside {PROVIDER_NAMES}: {literal}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as folder:
        root = pathlib.Path(folder)
        (root / "engine/src/compare").mkdir(parents=True)
        (root / "app/bridge").mkdir(parents=True)
        (root / "engine/src/ok.cpp").write_text(
            '// --shape in a comment is fine\nauto a = "x--y"; /* "--flag" */ char q = \'"\';\n')
        (root / "engine/src/compare/reproducer.cpp").write_text('auto run = "kiln run --input x";\n')
        (root / "engine/src/bad.cpp").write_text('auto m = "fix it with --shape";\n')
        (root / "app/bridge/ep.cpp").write_text('auto ep = QStringLiteral("CPUExecutionProvider");\n')
        found = check(root)
        expected = ["engine/src/bad.cpp:1:", "app/bridge/ep.cpp:1:"]
        if len(found) != 2 or not all(any(p.startswith(e) for p in found) for e in expected):
            print("self-test FAILED:", *found, sep="\n  ")
            return 1
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(guard_cli.main(check, self_test, __doc__))
