#!/usr/bin/python3
"""kiln run --profile FILE on the bundled sample model: the node-data JSON (app/README.md, "Per-node data") names
every node of the CPU run with its time, the Vulkan run's partition lists the nodes it covers, --json points to the
file, and an unwritable path is a clear error with nothing left behind.
Usage: profile_command.py KILN_BINARY SOURCE_DIR
"""
import json
import sys
import tempfile
from pathlib import Path

from cli_checks import Checks, run_kiln

CHECKS = Checks("profile_command")
expect = CHECKS.expect


def kiln(*args):
    return run_kiln(KILN, *args)


def main():
    global KILN
    KILN, source = sys.argv[1], Path(sys.argv[2])
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cpu = tmp / "cpu.json"
        code, out, err = kiln("run", model, "--ep", "cpu", "--config", "kiln.graph_optimization_level=none",
                              "--runs", "2", "--profile", str(cpu))
        expect(code == 0, f"run --profile exits 0 (got {code}: {err})")
        expect("slowest nodes of the profiled run" in out, f"text output lists the slowest nodes:\n{out}")
        data = json.loads(cpu.read_text())
        expect(data["format"] == "kiln-node-data" and data["version"] == 1, "format and version")
        expect(data["kind"] == "profile" and data["model"] == model, "kind and model")
        expect(data["summary"]["run_ms"] > 0, "summary.run_ms")
        # Every node of the unoptimized model appears once, by its model name, on the CPU EP.
        names = [n["node"] for n in data["nodes"]]
        model_nodes = node_names(model)
        expect(sorted(names) == sorted(model_nodes), f"every model node once: {names} vs {model_nodes}")
        for n in data["nodes"]:
            expect(n["metrics"]["time_ms"] >= 0 and n["calls"] == 1 and n["graph"] == "main", f"entry {n}")
            expect(n["execution_provider"] == "CPUExecutionProvider", f"{n['node']} on the CPU EP")

        code, out, err = kiln("run", model, "--ep", "cpu", "--profile", str(tmp / "j.json"), "--json")
        expect(code == 0, f"--json run exits 0 ({err})")
        report = json.loads(out)
        expect(report["profile"]["file"] == str(tmp / "j.json") and report["profile"]["nodes"] > 0, "JSON names the file")

        code, out, err = kiln("run", model, "--ep", "vulkan", "--profile", str(tmp / "vk.json"))
        if code == 0:
            vk = json.loads((tmp / "vk.json").read_text())
            partitions = [n for n in vk["nodes"] if n["op_type"] == "KilnPartition"]
            expect(len(partitions) == 1, f"one compiled partition entry: {vk['nodes']}")
            expect(partitions and partitions[0]["execution_provider"] == "VulkanExecutionProvider", "partition EP")
            expect(partitions and len(partitions[0]["covers"]) == len(model_nodes), "partition covers every node")
        else:
            expect("Vulkan" in err or "device" in err, f"no Vulkan device is the only excuse: {err}")

        code, out, err = kiln("run", model, "--ep", "cpu", "--profile", str(tmp / "missing" / "p.json"))
        expect(code == 1 and "cannot write node data" in err, f"unwritable --profile: exit 1 naming it ({code}: {err})")
        expect(not (tmp / "missing").exists(), "no folder created for an unwritable path")
    return CHECKS.finish()


def node_names(model):
    import onnx
    return [n.name for n in onnx.load(model).graph.node]


if __name__ == "__main__":
    sys.exit(main())
