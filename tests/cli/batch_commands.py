#!/usr/bin/python3
"""kiln batch end to end: a real compile and check, a failing job and a crashing one in one batch (both reported,
the rest completed), --jobs 2 (two jobs that can only finish if they run at the same time), --fail-fast, a
timeout, and malformed jobs files (exit 2 before any job runs).

Jobs misbehave through a stand-in for kiln (`--kiln WRAPPER`, written here): it kills itself with SIGSEGV when an
argument is --crash-here and otherwise obeys BATCH_* variables from the job's "env", then execs the real kiln.
Usage: batch_commands.py KILN_BINARY SOURCE_DIR   (exit 77: skipped, no Vulkan device and KILN_REQUIRE_VULKAN unset)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import failure, required  # noqa: E402

failures = 0

WRAPPER = r"""#!/bin/sh
# A stand-in for kiln in batch tests: misbehaves on request, else runs the real kiln.
ulimit -c 0
[ -n "$BATCH_TOUCH" ] && touch "$BATCH_TOUCH"
if [ -n "$BATCH_RENDEZVOUS_ME" ]; then
  # Succeeds only if the other job starts while this one waits: proof that both run at once.
  touch "$BATCH_RENDEZVOUS_ME.started"
  i=0
  while [ ! -e "$BATCH_RENDEZVOUS_OTHER.started" ]; do
    i=$((i + 1))
    if [ $i -gt 300 ]; then echo "never met $BATCH_RENDEZVOUS_OTHER" >&2; exit 9; fi
    sleep 0.05
  done
fi
# Not exec'd: the sleep outlives a SIGKILL of this shell and keeps the pipes open.
[ -n "$BATCH_SLEEP" ] && sleep "$BATCH_SLEEP"
for arg in "$@"; do
  [ "$arg" = "--crash-here" ] && kill -SEGV $$
done
exec "$KILN_REAL" "$@"
"""


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def batch(folder, jobs, *options):
    (folder / "jobs.json").write_text(json.dumps(jobs, indent=1))
    start = time.monotonic()
    result = subprocess.run([KILN, "batch", str(folder / "jobs.json"), "--kiln", str(WRAPPER_PATH), *options],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "KILN_REAL": KILN})
    return result.returncode, result.stdout, result.stderr, time.monotonic() - start


def by_name(report):
    return {job["name"]: job for job in report["jobs"]}


def vulkan_available():
    result = subprocess.run([KILN, "devices", "--json"], capture_output=True, text=True, timeout=120)
    return result.returncode == 0 and json.loads(result.stdout)["devices"]


def mixed_batch(tmp, model):
    """compile + check + a failing job + a crashing job: both failures reported, the rest completed."""
    folder = tmp / "mixed"
    folder.mkdir()
    jobs = {"jobs": [
        {"name": "tiny", "command": "compile", "args": [model, "-o", "out/tiny_ctx.onnx"]},
        {"name": "tiny-check", "command": "check", "args": ["out/tiny_vulkan.bin"]},
        {"name": "missing", "command": "run", "args": ["no/such/model.onnx"]},
        {"name": "boom", "command": "partition", "args": [model, "--crash-here"]},
    ]}
    code, out, err, _ = batch(folder, jobs, "--json", "--report", str(folder / "report.json"))
    expect(code == 1, f"a batch with failures exits 1 (got {code}: {err})")
    report = json.loads(out)
    expect(json.loads((folder / "report.json").read_text()) == report, "--report holds the same document as stdout")
    expect(report["summary"] == {"total": 4, "succeeded": 2, "failed": 1, "crashed": 1, "timed_out": 0,
                                 "skipped": 0}, f"summary {report['summary']}")
    jobs = by_name(report)
    expect([j["name"] for j in report["jobs"]] == ["tiny", "tiny-check", "missing", "boom"], "jobs in file order")
    tiny = jobs["tiny"]
    expect(tiny["status"] == "ok" and tiny["exit_code"] == 0, f"compile ok ({tiny['status']}: {tiny['stderr_tail']})")
    expect(tiny["argv"][1:] == ["compile", model, "-o", "out/tiny_ctx.onnx", "--json"], f"argv {tiny['argv']}")
    expect(tiny["result"] and tiny["result"]["epcontext_nodes"] == 1, "compile's JSON is the job's result")
    expect((folder / "out" / "tiny_ctx.onnx").exists() and (folder / "out" / "tiny_vulkan.bin").exists(),
           "relative -o resolved against the jobs file's folder")
    expect(isinstance(tiny["wall_ms"], (int, float)) and tiny["wall_ms"] > 0, "wall_ms")
    check = jobs["tiny-check"]
    expect(check["status"] == "ok" and check["result"]["verdict"] == "optimal",
           f"check of the compiled binary ({check['status']}, {check['result']})")
    missing = jobs["missing"]
    expect(missing["status"] == "failed" and missing["exit_code"] == 1, f"missing model fails with exit 1 ({missing})")
    expect("no/such/model.onnx" in missing["stderr_tail"], "stderr_tail says what failed")
    expect(missing["result"] and missing["result"]["error"]["code"] == "NO_SUCHFILE", "the child's error JSON")
    boom = jobs["boom"]
    expect(boom["status"] == "crashed" and boom["signal"] == 11 and "exit_code" not in boom and boom["result"] is None,
           f"crash reported with its signal ({boom})")
    lines = [l for l in err.splitlines() if l.startswith("kiln: [")]
    expect(len(lines) == 4 and lines[0].startswith("kiln: [1/4] compile tiny ok ") and lines[0].endswith(" ms"),
           f"a progress line per job ({lines})")
    expect(any(l.startswith("kiln: [4/4] partition boom crashed (signal 11") for l in lines), "crash progress line")

    # The same batch as a table: both failures visible, with their reasons.
    code, out, err, _ = batch(folder, {"jobs": jobs_of(folder)}, "--quiet")
    expect(code == 1 and err == "" and out == "", f"--quiet prints nothing ({out!r}, {err!r})")
    code, out, err, _ = batch(folder, {"jobs": jobs_of(folder)})
    expect("4 jobs: 2 ok, 1 failed, 1 crashed, 0 timed out, 0 skipped" in out, f"table summary:\n{out}")
    expect(any(l.startswith("boom ") and "crashed" in l and "signal 11" in l for l in out.splitlines()), "table row")


def jobs_of(folder):
    return json.loads((folder / "jobs.json").read_text())["jobs"]


def parallel_batch(tmp, model):
    """--jobs 2: two jobs that each wait for the other to start; with one worker the first would give up."""
    folder = tmp / "parallel"
    folder.mkdir()
    jobs = [
        {"name": "a", "command": "partition", "args": [model, "--ep", "cpu"],
         "env": {"BATCH_RENDEZVOUS_ME": "a", "BATCH_RENDEZVOUS_OTHER": "b"}},
        {"name": "b", "command": "partition", "args": [model, "--ep", "cpu"],
         "env": {"BATCH_RENDEZVOUS_ME": "b", "BATCH_RENDEZVOUS_OTHER": "a"}},
        {"name": "c", "command": "partition", "args": [model, "--ep", "cpu"]},
    ]
    code, out, err, _ = batch(folder, jobs, "--jobs", "2", "--json")
    report = json.loads(out)
    expect(code == 0 and report["summary"]["succeeded"] == 3, f"--jobs 2 runs both at once ({report['summary']}: {err})")
    expect((folder / "a.started").exists(), "the job's env reached the child and its folder was the jobs folder")


def fail_fast_batch(tmp, model):
    folder = tmp / "failfast"
    folder.mkdir()
    jobs = [
        {"name": "first", "command": "partition", "args": [model, "--ep", "cpu"]},
        {"name": "bad", "command": "run", "args": ["missing.onnx"]},
        {"name": "later", "command": "partition", "args": [model, "--ep", "cpu"], "env": {"BATCH_TOUCH": "later.ran"}},
        {"name": "last", "command": "partition", "args": [model, "--ep", "cpu"]},
    ]
    code, out, err, _ = batch(folder, jobs, "--fail-fast", "--json")
    report = json.loads(out)
    statuses = [j["status"] for j in report["jobs"]]
    expect(code == 1 and statuses == ["ok", "failed", "skipped", "skipped"], f"--fail-fast statuses {statuses}")
    expect(not (folder / "later.ran").exists(), "a skipped job never started")
    expect(report["summary"]["skipped"] == 2, "skipped counted")
    skipped = report["jobs"][2]
    expect("exit_code" not in skipped and "signal" not in skipped and skipped["result"] is None, f"skipped job {skipped}")
    # Without --fail-fast the same file runs to the end.
    code, out, _, _ = batch(folder, jobs, "--json")
    expect([j["status"] for j in json.loads(out)["jobs"]] == ["ok", "failed", "ok", "ok"], "no --fail-fast: all run")


def timeout_batch(tmp, model):
    folder = tmp / "timeout"
    folder.mkdir()
    jobs = [{"name": "slow", "command": "partition", "args": [model], "timeout_s": 1, "env": {"BATCH_SLEEP": "30"}},
            {"name": "quick", "command": "partition", "args": [model, "--ep", "cpu"]}]
    code, out, _, seconds = batch(folder, jobs, "--json")
    report = json.loads(out)
    slow = report["jobs"][0]
    expect(code == 1 and slow["status"] == "timed_out" and slow["signal"] == 9 and slow["timeout_s"] == 1,
           f"timeout reported ({slow})")
    expect(report["jobs"][1]["status"] == "ok", "the job after a timeout still runs")
    expect(seconds < 20, f"a killed job's leftover grandchild does not hold the batch ({seconds:.1f} s)")


def after_batch(tmp, model):
    """"after": with --jobs 2 the waiting job starts only once its dependency ended; a failed dependency skips it
    (and whatever waits for it), without running it."""
    folder = tmp / "after"
    folder.mkdir()
    jobs = [
        {"name": "slow", "command": "partition", "args": [model, "--ep", "cpu"], "env": {"BATCH_SLEEP": "1"}},
        {"name": "bad", "command": "run", "args": ["missing.onnx"]},
        {"name": "then", "command": "partition", "args": [model, "--ep", "cpu"], "after": "slow",
         "env": {"BATCH_TOUCH": "then.ran"}},
        {"name": "never", "command": "partition", "args": [model, "--ep", "cpu"], "after": "bad",
         "env": {"BATCH_TOUCH": "never.ran"}},
        {"name": "never2", "command": "partition", "args": [model, "--ep", "cpu"], "after": "never"},
    ]
    code, out, err, _ = batch(folder, jobs, "--jobs", "2", "--json")
    report = json.loads(out)
    statuses = [j["status"] for j in report["jobs"]]
    expect(code == 1 and statuses == ["ok", "failed", "ok", "skipped", "skipped"], f"after: statuses {statuses} ({err})")
    expect((folder / "then.ran").exists() and not (folder / "never.ran").exists(), "a skipped job never started")
    expect(report["jobs"][3]["skipped_because"] == 'after "bad": failed' and
           report["jobs"][4]["skipped_because"] == 'after "never": skipped', f"why skipped: {report['jobs'][3:]}")
    expect("kiln: [" in err and 'skipped (after "bad": failed)' in err, f"progress names the reason: {err}")


def malformed_files(tmp, model):
    """Usage errors (exit 2) naming the job and field; nothing runs, not even the valid jobs before the bad one."""
    folder = tmp / "malformed"
    folder.mkdir()
    good = {"name": "good", "command": "partition", "args": [model], "env": {"BATCH_TOUCH": "good.ran"}}
    cases = [
        ([good, {"command": "compile", "args": ["a.onnx", 3]}], "jobs[1].args[1]: must be a string, not number"),
        ([good, {"command": "frobnicate"}], 'jobs[1].command: unknown command "frobnicate"'),
        ([good, {"command": "batch", "args": ["other.json"]}], "jobs[1].command: a batch cannot run another batch"),
        ([good, {"args": []}], 'jobs[1]: missing field "command"'),
        ([good, {"command": "run", "argz": []}], 'jobs[1]: unknown field "argz"'),
        ([good, {"command": "run", "env": {"A": 1}}], "jobs[1].env.A: must be a string"),
        ([good, {"command": "run", "timeout_s": -1}], "jobs[1].timeout_s"),
        ([good, dict(good)], 'jobs[1].name: "good" is already the name of jobs[0]'),
        ([good, {"command": "run", "after": "later"}, {"name": "later", "command": "run"}],
         'jobs[1].after: no earlier job is named "later"'),
        ({"jobz": [good]}, 'unknown field "jobz"'),
        ("not json", "not valid JSON"),
    ]
    for jobs, message in cases:
        if isinstance(jobs, str):
            (folder / "jobs.json").write_text(jobs)
            result = subprocess.run([KILN, "batch", str(folder / "jobs.json")], capture_output=True, text=True)
            code, err = result.returncode, result.stderr
        else:
            code, _, err, _ = batch(folder, jobs)
        expect(code == 2 and message in err, f"malformed jobs file: exit 2 with '{message}' (got {code}: {err.strip()})")
        expect(not (folder / "good.ran").exists(), f"no job ran for a malformed file ({message})")
    result = subprocess.run([KILN, "batch", str(folder / "none.json")], capture_output=True, text=True)
    expect(result.returncode == 2 and "cannot open the jobs file" in result.stderr, "missing jobs file: exit 2")


def main():
    global KILN, WRAPPER_PATH
    KILN, source = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        WRAPPER_PATH = tmp / "crashing_kiln.sh"
        WRAPPER_PATH.write_text(WRAPPER)
        WRAPPER_PATH.chmod(0o755)
        malformed_files(tmp, model)
        parallel_batch(tmp, model)
        fail_fast_batch(tmp, model)
        timeout_batch(tmp, model)
        after_batch(tmp, model)
        if vulkan_available():
            mixed_batch(tmp, model)
        elif required("VULKAN"):
            expect(False, failure("VULKAN", "no Vulkan device"))
        else:
            print("SKIP: the compile batch needs a Vulkan device (lavapipe will do)")
            return 77 if failures == 0 else 1
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
