#!/usr/bin/python3
"""kiln batch --scheduler slurm on a live single-node cluster (started by slurm_cluster.sh, which sets SLURM_CONF):
the report of a mixed jobs file (ok, failing, crashing, timed out, a dependency that fails and one that succeeds)
equals the local run's in every status and exit code; --no-wait + --collect; Ctrl+C cancels the arrays; a missing
sbatch and an unreachable controller are clear errors.

Usage: slurm_batch.py KILN_BINARY SOURCE_DIR
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_commands import WRAPPER  # noqa: E402  the misbehaving stand-in for kiln the local batch test uses
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import failure, required  # noqa: E402

failures = 0


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def kiln(*args, env=None, timeout=240):
    return subprocess.run([KILN, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "KILN_REAL": KILN, **(env or {})})


def write_jobs(folder, jobs):
    folder.mkdir(exist_ok=True)
    path = folder / "jobs.json"
    path.write_text(json.dumps({"jobs": jobs}, indent=1))
    return path


def essentials(report):
    """What must be equal between schedulers: everything but timings and output text."""
    keys = ("name", "command", "argv", "status", "exit_code", "signal", "timeout_s", "skipped_because")
    return [{k: job.get(k) for k in keys} | {"error_code": ((job.get("result") or {}).get("error") or {}).get("code")}
            for job in report["jobs"]]


def mixed_jobs(model):
    return [
        {"name": "ok", "command": "partition", "args": [model, "--ep", "cpu"], "env": {"BATCH_TOUCH": "ok.ran"}},
        {"name": "missing", "command": "run", "args": ["no/such/model.onnx"]},
        {"name": "boom", "command": "partition", "args": [model, "--crash-here"]},
        {"name": "slow", "command": "partition", "args": [model], "timeout_s": 2, "env": {"BATCH_SLEEP": "60"}},
        {"name": "after-ok", "command": "partition", "args": [model, "--ep", "cpu"], "after": "ok"},
        {"name": "after-missing", "command": "partition", "args": [model, "--ep", "cpu"], "after": "missing"},
        {"name": "after-skipped", "command": "partition", "args": [model, "--ep", "cpu"], "after": "after-missing"},
    ]


def mixed(tmp, model):
    """The same jobs file locally and on Slurm: equal statuses, exit codes and signals."""
    jobs_file = write_jobs(tmp / "mixed", mixed_jobs(model))
    local = kiln("batch", str(jobs_file), "--kiln", str(WRAPPER_PATH), "--jobs", "2", "--json")
    expect(local.returncode == 1, f"local batch exits 1 ({local.returncode}: {local.stderr})")
    local_report = json.loads(local.stdout)
    (tmp / "mixed" / "ok.ran").unlink()
    start = time.monotonic()
    slurm = kiln("batch", str(jobs_file), "--kiln", str(WRAPPER_PATH), "--scheduler", "slurm", "--json",
                 "--report", str(tmp / "mixed" / "slurm-report.json"))
    print(f"slurm batch: {time.monotonic() - start:.1f} s")
    expect(slurm.returncode == 1, f"slurm batch exits 1 ({slurm.returncode}: {slurm.stderr})")
    report = json.loads(slurm.stdout)
    expect(json.loads((tmp / "mixed" / "slurm-report.json").read_text()) == report, "--report equals stdout")
    expect(essentials(report) == essentials(local_report),
           f"slurm report equals the local one:\n{essentials(report)}\n!=\n{essentials(local_report)}")
    expect(report["summary"] == local_report["summary"] == {"total": 7, "succeeded": 2, "failed": 1, "crashed": 1,
                                                          "timed_out": 1, "skipped": 2}, f"summary {report['summary']}")
    statuses = {j["name"]: j["status"] for j in report["jobs"]}
    expect(statuses == {"ok": "ok", "missing": "failed", "boom": "crashed", "slow": "timed_out", "after-ok": "ok",
                        "after-missing": "skipped", "after-skipped": "skipped"}, f"statuses {statuses}")
    by_name = {j["name"]: j for j in report["jobs"]}
    expect(by_name["boom"]["signal"] == 11 and by_name["slow"]["signal"] == 9, "signals survive the status file")
    expect(by_name["ok"]["result"] is not None and by_name["missing"]["exit_code"] == 1, "results and exit codes")
    expect("no/such/model.onnx" in by_name["missing"]["stderr_tail"], "stderr tail from the task")
    expect(by_name["after-missing"]["skipped_because"] == 'after "missing": failed', "why skipped")
    expect((tmp / "mixed" / "ok.ran").exists(), "the job's env and working folder reached the Slurm task")
    expect("kiln: slurm: " in slurm.stderr and re.search(r"kiln: \[7/7\] ", slurm.stderr), f"progress:\n{slurm.stderr}")
    # The table, not just JSON, from the status files.
    table = kiln("batch", str(jobs_file), "--kiln", str(WRAPPER_PATH), "--scheduler", "slurm", "--quiet")
    expect(table.returncode == 1 and table.stdout == "", f"--quiet on slurm ({table.returncode}, {table.stdout!r})")


def no_wait_and_collect(tmp, model):
    jobs_file = write_jobs(tmp / "later", [
        {"name": "a", "command": "partition", "args": [model, "--ep", "cpu"]},
        {"name": "b", "command": "run", "args": ["missing.onnx"]}])
    submitted = kiln("batch", str(jobs_file), "--kiln", str(WRAPPER_PATH), "--scheduler", "slurm", "--no-wait")
    array_id = submitted.stdout.strip()
    expect(submitted.returncode == 0 and array_id.isdigit(), f"--no-wait prints the array id ({submitted})")
    collected = kiln("batch", "--collect", array_id, str(jobs_file), "--json")
    expect(collected.returncode == 1, f"--collect exits like the batch ({collected.returncode}: {collected.stderr})")
    statuses = [j["status"] for j in json.loads(collected.stdout)["jobs"]] if collected.stdout else None
    expect(statuses == ["ok", "failed"], f"--collect reports the batch ({statuses})")
    again = kiln("batch", "--collect", array_id, str(jobs_file), "--json")
    expect(again.returncode == 1 and again.stdout == collected.stdout.replace("", ""), "collecting twice: same report")
    unknown = kiln("batch", "--collect", "999999", str(jobs_file))
    expect(unknown.returncode == 2 and "no Slurm batch 999999" in unknown.stderr, f"unknown id: {unknown.stderr}")


def squeue_ids():
    out = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True).stdout
    return out.split()


def cancel(tmp, model):
    """Ctrl+C while the tasks run: kiln cancels the arrays and exits 130."""
    jobs_file = write_jobs(tmp / "cancel", [
        {"name": "a", "command": "partition", "args": [model], "env": {"BATCH_SLEEP": "120"}},
        {"name": "b", "command": "partition", "args": [model], "env": {"BATCH_SLEEP": "120"}},
        {"name": "c", "command": "partition", "args": [model, "--ep", "cpu"], "after": "a"}])
    process = subprocess.Popen([KILN, "batch", str(jobs_file), "--kiln", str(WRAPPER_PATH), "--scheduler", "slurm"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "KILN_REAL": KILN})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "RUNNING" not in squeue_ids():
        time.sleep(0.2)
    expect("RUNNING" in squeue_ids(), "the tasks started")
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    expect(process.returncode == 130 and "cancelled Slurm job" in err, f"Ctrl+C: exit 130 ({process.returncode}: {err})")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and squeue_ids():
        time.sleep(0.2)
    expect(not squeue_ids(), f"nothing left in the queue ({squeue_ids()})")


def errors(tmp, model):
    jobs_file = write_jobs(tmp / "errors", [{"name": "a", "command": "partition", "args": [model]}])
    missing = kiln("batch", str(jobs_file), "--scheduler", "slurm", env={"PATH": str(tmp / "empty")})
    expect(missing.returncode == 1 and "'sbatch' is not on PATH" in missing.stderr, f"no sbatch: {missing.stderr}")
    # A controller nobody runs: the cluster's configuration with a port nothing listens on.
    conf = Path(os.environ["SLURM_CONF"]).read_text()
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp / "errors" / "slurm.conf").write_text(re.sub(r"SlurmctldPort=\d+", f"SlurmctldPort={port}", conf))
    start = time.monotonic()
    down = kiln("batch", str(jobs_file), "--scheduler", "slurm", env={"SLURM_CONF": str(tmp / "errors" / "slurm.conf")})
    expect(down.returncode == 1 and "cannot reach the Slurm controller" in down.stderr,
           f"controller down: {down.returncode}: {down.stderr}")
    print(f"unreachable controller reported in {time.monotonic() - start:.1f} s")
    no_models = kiln("batch", "--matrix", str(tmp / "nope"), "--profiles", str(tmp / "empty"))
    expect(no_models.returncode == 2 and "--matrix: no folder" in no_models.stderr, f"--matrix nope: {no_models.stderr}")
    no_profiles = kiln("batch", "--matrix", str(Path(model).parent), "--profiles", str(tmp / "empty"))
    expect(no_profiles.returncode == 2 and "--profiles: no device profile" in no_profiles.stderr,
           f"--profiles without profiles: {no_profiles.stderr}")
    early = kiln("batch", str(jobs_file), "--scheduler", "slurm", "--no-wait", "--report", str(tmp / "r.json"))
    expect(early.returncode == 2 and "pass --report to --collect" in early.stderr, f"--no-wait --report: {early.stderr}")
    usage = kiln("batch", str(jobs_file), "--no-wait")
    expect(usage.returncode == 2 and "need --scheduler slurm" in usage.stderr, f"--no-wait alone: {usage.stderr}")


SMALL_MLP = r"""
import sys
import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(0)
weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
           for name, shape in (("w1", (16, 32)), ("b1", (32,)), ("w2", (32, 4)))]
nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])]
graph = helper.make_graph(nodes, "tiny_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], weights)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
"""


def farm(tmp, source):
    """kiln batch --matrix: 2 models x 3 profiles (resources/profiles and this machine's kiln devices --profile),
    compiled, checked and benchmarked through Slurm, then the model x profile table."""
    folder = tmp / "farm"
    (folder / "models").mkdir(parents=True)
    (folder / "profiles").mkdir()
    (folder / "models" / "tiny_cnn.onnx").write_bytes((source / "resources/models/tiny_cnn.onnx").read_bytes())
    subprocess.run(["/usr/bin/python3", "-c", SMALL_MLP, str(folder / "models" / "tiny_mlp.onnx")], check=True)
    for profile in (source / "resources/profiles").glob("*.json"):
        (folder / "profiles" / profile.name).write_text(profile.read_text())
    local = kiln("devices", "--profile")
    expect(local.returncode == 0, f"kiln devices --profile ({local.stderr})")
    (folder / "profiles" / "local.json").write_text(local.stdout)
    (folder / "profiles" / "notes.json").write_text('{"not": "a profile"}')
    generated = kiln("batch", "--matrix", str(folder / "models"), "--profiles", str(folder / "profiles"),
                     "-o", str(folder / "farm.json"))
    expect(generated.returncode == 0, f"--matrix writes the jobs file ({generated.stderr})")
    jobs = json.loads((folder / "farm.json").read_text())["jobs"]
    names = [j["name"] for j in jobs]
    expect(len(jobs) == 2 * (3 * 2 + 1) and "check-tiny_mlp@local" in names and "bench-tiny_cnn" in names,
           f"2 models x 3 profiles: compile + check each, a bench per model ({names})")
    expect(all(not a.startswith("/") for j in jobs for a in j["args"] if a.endswith((".onnx", ".json"))),
           "paths under the jobs folder stay relative")
    start = time.monotonic()
    run = kiln("batch", str(folder / "farm.json"), "--scheduler", "slurm", timeout=170)
    print(f"farm through slurm: {time.monotonic() - start:.1f} s")
    expect(run.returncode == 0, f"the farm batch succeeds ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith(("tiny_cnn ", "tiny_mlp "))]
    expect(len(rows) == 6, f"one summary row per model and profile:\n{run.stdout}")
    for row in rows:
        expect(row[2] == "ok" and row[3] in ("optimal", "compatible") and row[5] == "KiB" and row[6].isdigit(),
               f"summary row {row}")
    print(run.stdout)


def vulkan_available():
    result = subprocess.run([KILN, "devices", "--json"], capture_output=True, text=True, timeout=120)
    return result.returncode == 0 and json.loads(result.stdout)["devices"]


def main():
    global KILN, WRAPPER_PATH
    KILN, source = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    if not os.environ.get("SLURM_CONF"):
        print("slurm_batch.py runs inside tests/cli/slurm_cluster.sh (no SLURM_CONF)")
        return 1
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "empty").mkdir()
        WRAPPER_PATH = tmp / "crashing_kiln.sh"
        WRAPPER_PATH.write_text(WRAPPER)
        WRAPPER_PATH.chmod(0o755)
        for test in (errors, mixed, no_wait_and_collect, cancel):
            start = time.monotonic()
            test(tmp, model)
            print(f"{test.__name__}: {time.monotonic() - start:.1f} s")
        if vulkan_available():
            start = time.monotonic()
            farm(tmp, source)
            print(f"farm: {time.monotonic() - start:.1f} s")
        elif required("VULKAN"):
            expect(False, failure("VULKAN", "no Vulkan device"))
        else:
            print("SKIP (farm only): compiling needs a Vulkan device (lavapipe will do)")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
