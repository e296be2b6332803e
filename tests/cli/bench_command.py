#!/usr/bin/python3
"""kiln bench end to end on the bundled sample model, with 2 runs per row (CI never runs the full bench): the JSON
shape the issue asks for, the work counters that prove each mode skipped what it claims to skip, the statistics'
consistency, the CSV, and the errors (unknown mode → 2, missing model → 1, nothing left behind).
Usage: bench_command.py KILN_BINARY SOURCE_DIR
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

failures = 0


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def kiln(*args, env=None):
    result = subprocess.run([KILN, *args], capture_output=True, text=True, timeout=900, env=env)
    return result.returncode, result.stdout, result.stderr


def check_stat(stat, what, count):
    expect(set(stat) == {"count", "min", "mean", "median", "p25", "p75", "p90", "p95", "p99", "max", "stddev", "cv",
                         "median_ci95", "samples"}, f"{what} has every statistic ({sorted(stat)})")
    expect(0 <= stat["min"] <= stat["p25"] <= stat["median"] <= stat["p75"] <= stat["max"],
           f"{what}: min <= p25 <= median <= p75 <= max ({stat})")
    expect(stat["count"] == count == len(stat["samples"]), f"{what}: {count} samples stored")
    # 2 runs: too few for any tail percentile or the median's interval (bench_statistics.h)
    expect(stat["p90"] is None and stat["p95"] is None and stat["p99"] is None and stat["median_ci95"] is None,
           f"{what}: no p90/p95/p99 or CI from {count} samples")


def main():
    global KILN
    KILN, source = sys.argv[1], Path(sys.argv[2])
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, TMPDIR=str(tmp))
        csv_path = tmp / "bench.csv"
        code, out, err = kiln("bench", model, "--runs", "2", "--inferences", "2", "--json", "--csv", str(csv_path),
                              env=env)
        expect(code == 0, f"bench exits 0 (got {code}: {err[-2000:]})")
        if code != 0:
            return
        report = json.loads(out)
        expect(report["model"] == model and report["device"], "model and device named")
        expect(report["vulkan"]["api_version"] and report["vulkan"]["driver_name"], "the Vulkan device's facts")
        expect(report["warnings"] and "2 runs per row" in report["warnings"][0], "too few runs warn")
        rows = {(m["name"], m["driver_cache"]): m for m in report["modes"]}
        expected = {(mode, cache) for mode in ("cold", "pipeline-cache", "epctx-embed", "epctx-file")
                    for cache in ("cold", "warm")} | {("in-process", "warm")}
        expect(set(rows) == expected, f"one row per mode and driver cache: {sorted(rows)}")
        for (name, cache), row in rows.items():
            what = f"{name}/{cache}"
            expect(row["runs"] == 2, f"{what}: 2 runs")
            for key in ("session_create_ms", "first_inference_ms", "time_to_first_result_ms"):
                check_stat(row[key], f"{what} {key}", 2)
            check_stat(row["inference_ms"], f"{what} inference_ms", 4)
            peak = row["memory_mib"]["peak_resident"]
            expect(peak and peak["median"] > 1, f"{what}: peak resident memory from the worker processes ({peak})")
            expect(row["stages_ms"] and row["counters"], f"{what}: stage breakdown and counters")
            expect(row["speedup_vs_cold"] > 0, f"{what}: speedup_vs_cold")
            if name == "cold":
                expect(abs(row["speedup_vs_cold"] - 1) < 1e-9, f"{what}: cold against itself is 1")
            counters = row["counters"]
            if name == "cold":
                expect(counters["glslang_compiles"] > 0 and counters["pipelines_created"] > 0,
                       f"{what}: a cold process compiles ({counters})")
            if name == "pipeline-cache":
                expect(counters["glslang_compiles"] == 0 and counters["pipeline_cache_hits"] > 0,
                       f"{what}: SPIR-V from the pipeline cache file ({counters})")
            if name.startswith("epctx"):
                expect(counters["glslang_compiles"] == 0 and counters["optimizer_passes_run"] == 0
                       and counters["weights_prepacked"] == 0, f"{what}: a ctx load skips the work ({counters})")
                expect("glslang_ms" not in row["stages_ms"], f"{what}: no glslang stage")
            if name == "in-process":
                expect(counters["pipelines_created"] == 0 and counters["glslang_compiles"] == 0,
                       f"{what}: the second session in a process reuses the device's pipelines ({counters})")
        expect(report["compile"]["epcontext_nodes"] >= 1, "the compile the epctx modes used is reported")
        summary = report["summary"]
        for key in ("epctx_session_create_speedup_driver_cold", "epctx_session_create_speedup_driver_warm",
                    "time_to_first_result_fully_cached_vs_fully_cold"):
            expect(isinstance(summary[key], float) and summary[key] > 0, f"summary {key}")
        with open(csv_path) as f:
            table = list(csv.DictReader(f))
        expect(len(table) == len(report["modes"]), "one CSV row per mode")
        expect(all(r["session_create_median_ms"] for r in table), "CSV medians filled")
        expect(not any(p.name.startswith("kiln-bench-") for p in tmp.iterdir()), "the work folder is removed")

        code, out, err = kiln("bench", model, "--modes", "cold,warp-speed", env=env)
        expect(code == 2 and "unknown mode 'warp-speed'" in err, f"unknown mode → exit 2 ({code}: {err})")
        code, out, err = kiln("bench", str(tmp / "missing.onnx"), "--json", env=env)
        expect(code == 1 and json.loads(out)["error"]["code"] == "NO_SUCHFILE", f"missing model → 1 ({code}: {err})")
        code, out, err = kiln("bench", model, "--driver-cache", "lukewarm", env=env)
        expect(code == 2, f"bad driver cache → exit 2 ({code})")
    print(f"bench_command: {failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
