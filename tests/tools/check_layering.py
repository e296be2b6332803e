#!/usr/bin/python3
"""Checks the engine's layering: which folders of engine/src may include which, and which may see the session's
configuration (the public headers in SESSION_HEADERS).

Usage: check_layering.py [ENGINE_SRC] [--edges] | --self-test

Every file under ENGINE_SRC (default: engine/src beside this script's repository) belongs to the module with the
longest matching path in MODULES (a folder, or a single file that is a layer of its own). An #include "..." that
names a file under ENGINE_SRC is an edge between two modules; each edge must be declared in MODULES, and neither
the declared dependencies nor the edges found may form a cycle. Prints every violation with the file and line that
causes it, and exits 1 when there is one; --edges also lists every edge found. A new folder must be declared here
before it can be included from another one. --self-test checks that a tree with a forbidden include, a cycle and an
undeclared folder is refused (exit 0 when it is).
"""

import os
import contextlib
import io
import re
import sys
import tempfile

# module -> the modules its files may include (direct dependencies; nothing is implied transitively).
# Ordered from the bottom up, as engine/README.md describes the layers.
MODULES = {
    "util": [],
    "ir": ["util"],
    # The EPContext contract (op, attribute and metadata names): a leaf header the model loader reads too.
    "epcontext/epcontext_names.h": [],
    "onnx": ["ir", "util", "epcontext/epcontext_names.h"],
    # Plain Vulkan device identity, features and limits, and device profiles: no Vulkan runtime.
    "device": ["util"],
    # Op semantics both execution providers follow: window geometry, axis and slice resolution.
    "ops": ["ir", "util"],
    # The EP interface, plain-data compiled partitions, host evaluation of single nodes, EP names.
    "ep": ["ir", "util"],
    "context_binary": ["device", "ep", "ir", "util"],
    "ep/cpu": ["ep", "ops", "ir", "util"],
    "ep/vulkan": ["context_binary", "device", "ep", "ops", "ir", "util"],
    "optimizer": ["ep", "ops", "ir", "util"],
    "partition": ["optimizer", "ep", "ir", "util"],
    "epcontext": ["partition", "context_binary", "device", "ep", "onnx", "ops", "ir", "util",
                  "epcontext/epcontext_names.h"],
    "session": ["epcontext", "partition", "optimizer", "context_binary", "ep/cpu", "device", "ep", "ops",
                "onnx", "ir", "util", "epcontext/epcontext_names.h"],
    # kiln/compare.h: runs sessions through the public API; loads and rewrites models with onnx/. kiln/model_diff.h
    # walks the loaded ir::Model (graphs, nodes, body paths).
    "compare": ["onnx", "ir", "util", "epcontext/epcontext_names.h"],
    # kiln/model_package.h: compiles variants and judges them through the public API (compileModel,
    # getModelCompatibility); reads a source's external data ranges with onnx/.
    "package": ["onnx", "util"],
}

# Single files that may include a module their own module may not: the one place that creates the execution
# providers (and hands their hooks down) names the Vulkan EP; nothing else above ep/ does.
FILE_ALLOWANCES = {
    "session/execution_providers.cpp": ["ep/vulkan"],
}

# The public headers that carry a session's configuration (SessionOptions, config key names, the Compile API's
# options): only the layers that parse configuration or serve the public API through sessions may include them.
# Every lower layer gets its own typed struct from session/ (session/session_config.h) and reads no key.
SESSION_HEADERS = ("kiln/session.h", "kiln/session_options.h", "kiln/compiler.h", "kiln/config_keys.h")
SESSION_HEADER_USERS = ("session", "compare", "package")
# Single files allowed one of them, with the reason.
SESSION_HEADER_EXCEPTIONS = {
    # A compile record names the options it was compiled with by their config keys (its stored format).
    ("epcontext/compile_record.cpp", "kiln/config_keys.h"),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".inl")


def module_of(relative_path):
    """The declared module a path under engine/src belongs to (longest match), or None."""
    best = None
    for module in MODULES:
        if relative_path == module or relative_path.startswith(module + "/"):
            if best is None or len(module) > len(best):
                best = module
    return best


def find_cycles(graph):
    """Strongly connected components of more than one module (Tarjan), each as a sorted list."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def check(root, show_edges=False):
    """Prints the problems of the tree at `root`; returns them."""
    problems = []
    declared_cycles = find_cycles({m: set(deps) for m, deps in MODULES.items()})
    for cycle in declared_cycles:
        problems.append("declared dependencies form a cycle: " + " <-> ".join(cycle))
    for module, deps in MODULES.items():
        for dep in deps:
            if dep not in MODULES:
                problems.append(f"{module} depends on undeclared module {dep}")

    edges = {}  # (from, to) -> ["file:line include", ...]
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            source_module = module_of(relative)
            if source_module is None:
                problems.append(f"{relative}: its folder is not declared in check_layering.py")
                continue
            with open(path, encoding="utf-8", errors="replace") as text:
                for number, line in enumerate(text, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = match.group(1)
                    if (target in SESSION_HEADERS and source_module not in SESSION_HEADER_USERS
                            and (relative, target) not in SESSION_HEADER_EXCEPTIONS):
                        problems.append(f"{relative}:{number}: {source_module} may not include {target} "
                                        "(configuration reaches it as its own struct from session/)")
                        continue
                    if not os.path.isfile(os.path.join(root, target)):
                        continue  # the public headers (kiln/...), the file's own folder, or no engine file
                    target_module = module_of(target)
                    if target_module is None:
                        problems.append(f"{relative}:{number}: includes {target}, in an undeclared folder")
                    elif target_module != source_module:
                        edges.setdefault((source_module, target_module), []).append(f"{relative}:{number} {target}")

    graph = {}
    for (source, target), sites in sorted(edges.items()):
        graph.setdefault(source, set()).add(target)
        if show_edges:
            print(f"{source} -> {target} ({len(sites)})")
        if target not in MODULES.get(source, []):
            for site in sites:
                if target in FILE_ALLOWANCES.get(site.split(":")[0], []):
                    continue
                problems.append(f"{site}: {source} may not include {target}")
    for cycle in find_cycles(graph):
        problems.append("include cycle between " + ", ".join(cycle))

    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layering: {len(problems)} problem(s); the allowed dependencies are MODULES in {__file__}")
    else:
        print(f"check_layering: {len(edges)} folder dependencies, all declared, no cycle")
    return problems


def self_test():
    """A tree where util includes ir (forbidden, and a cycle with ir -> util) and a file sits in an undeclared folder."""
    files = {
        "util/status.h": '#include "ir/graph.h"\n',
        "ir/graph.h": '#include "util/status.h"\n#include <vector>\n#include "kiln/tensor.h"\n'
                      '#include "kiln/session_options.h"\n',
        "ep/cpu/kernel.h": '#include "ep/execution_provider.h"\n',
        "ep/execution_provider.h": "",
        "stray/thing.h": '#include "util/status.h"\n',
    }
    expected = ["util/status.h:1 ir/graph.h: util may not include ir", "include cycle between ir, util",
                "stray/thing.h: its folder is not declared", "ir/graph.h:4: ir may not include kiln/session_options.h"]
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as out:
                out.write(text)
        with contextlib.redirect_stdout(io.StringIO()):
            problems = check(root)
    missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
    if missing or len(problems) != len(expected):
        print("check_layering self-test failed; expected", expected, "got", problems)
        return 1
    print(f"check_layering self-test: the {len(expected)} planted problems are reported")
    return 0


def main(argv):
    if "--self-test" in argv[1:]:
        return self_test()
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "engine", "src")
    root = os.path.normpath(root)
    if not os.path.isdir(root):
        print(f"check_layering: no folder {root}")
        return 1
    return 1 if check(root, "--edges" in argv[1:]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
