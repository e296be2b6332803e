#!/usr/bin/python3
"""kiln check's onnxruntime compatibility states on a live device (issue 23's bar): a plain model is NOT_APPLICABLE;
a fresh ctx model is SUPPORTED_OPTIMAL answered from its ep_compatibility_info (no binary read); the same against a
profile of this device whose driver_info was edited is SUPPORTED_PREFER_RECOMPILATION (exit 3 with
--fail-on-suboptimal); a profile lacking a feature is UNSUPPORTED (exit 3); a ctx model whose binary is gone or
replaced is UNSUPPORTED naming it; an embedded ctx model answers too. Staleness: the source with one weight
changed (--source, or edited in place where the compile record points) is UNSUPPORTED "stale: source changed";
other result-changing options (--config) are SUPPORTED_PREFER_RECOMPILATION "stale: options changed".
Usage: check_compatibility.py KILN_BINARY SOURCE_DIR
"""
import json
import shutil
import sys
import tempfile
from pathlib import Path

from cli_checks import Checks, run_kiln

CHECKS = Checks("check_compatibility")
expect = CHECKS.expect


def kiln(*args):
    return run_kiln(KILN, *args)


def check(*args):
    code, out, err = kiln("check", *args, "--json")
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, {}, err


def main():
    global KILN
    KILN, source = sys.argv[1], Path(sys.argv[2])
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        code, out, err = kiln("compile", model, "-o", str(tmp / "tiny_ctx.onnx"), "--quiet")
        if code != 0 and "no Vulkan device" in err:
            print("skipped: no Vulkan device")
            return 77
        expect(code == 0, f"compile exits 0 ({err})")
        ctx, binary = str(tmp / "tiny_ctx.onnx"), str(tmp / "tiny_vulkan.bin")

        code, report, err = check(model)
        expect(code == 0 and report.get("compatibility") == "NOT_APPLICABLE", f"plain model: {code} {report} {err}")

        code, report, err = check(ctx)
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_OPTIMAL", f"fresh ctx model: {report} {err}")
        expect(report.get("answered_from") == "metadata", f"answered from the metadata: {report}")
        code, report, err = check(binary)
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_OPTIMAL", f"its binary: {report}")

        code, out, err = kiln("devices", "--profile")
        expect(code == 0, f"devices --profile ({err})")
        profile = json.loads(out)
        edited = json.loads(out)
        edited["identity"]["driver_info"] += " (edited)"
        (tmp / "edited.json").write_text(json.dumps(edited))
        code, report, err = check(ctx, "--profile", str(tmp / "edited.json"))
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_PREFER_RECOMPILATION",
               f"edited driver_info: {code} {report} {err}")
        expect(any("driver info" in r for r in report.get("reasons", [])), f"the reason names the driver info: {report}")
        code, _, _ = kiln("check", ctx, "--profile", str(tmp / "edited.json"), "--fail-on-suboptimal")
        expect(code == 3, f"--fail-on-suboptimal exits 3 (got {code})")

        lacking = profile
        lacking["features"]["subgroup_arithmetic"] = False
        (tmp / "lacking.json").write_text(json.dumps(lacking))
        code, report, err = check(ctx, "--profile", str(tmp / "lacking.json"))
        expect(code == 3 and report.get("compatibility") == "UNSUPPORTED", f"profile lacking a feature: {code} {report} {err}")

        # Binary replaced by another compile of a different model: the recorded content id no longer matches.
        other = tmp / "other"
        other.mkdir()
        code, _, err = kiln("compile", str(source / "tests/cli/data/partition_sample.onnx"), "-o",
                            str(other / "tiny_ctx.onnx"), "--quiet")
        if code == 0:
            shutil.copy(other / "tiny_vulkan.bin", binary)
            code, report, err = check(ctx)
            expect(code == 3 and report.get("compatibility") == "UNSUPPORTED", f"replaced binary: {code} {report} {err}")
            expect(any("does not match" in r for r in report.get("reasons", [])), f"names the mismatch: {report}")
        Path(binary).unlink()
        code, report, err = check(ctx)
        expect(code == 3 and report.get("compatibility") == "UNSUPPORTED", f"missing binary: {code} {report} {err}")
        expect(any("tiny_vulkan.bin" in r for r in report.get("reasons", [])), f"names the missing binary: {report}")

        code, out, err = kiln("compile", model, "-o", str(tmp / "emb_ctx.onnx"), "--embed-mode", "1", "--quiet")
        expect(code == 0, f"embedded compile ({err})")
        code, report, err = check(str(tmp / "emb_ctx.onnx"), "--profile", str(tmp / "edited.json"))
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_PREFER_RECOMPILATION",
               f"embedded ctx model against the edited profile: {report} {err}")

        # Staleness against the compile record: the source is copied beside the ctx model, so the record finds it.
        stale = tmp / "stale"
        stale.mkdir()
        shutil.copy(model, stale / "src.onnx")
        code, _, err = kiln("compile", str(stale / "src.onnx"), "-o", str(stale / "src_ctx.onnx"), "--quiet")
        expect(code == 0, f"compile of the copy ({err})")
        code, report, err = check(str(stale / "src_ctx.onnx"))
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_OPTIMAL", f"fresh: {report} {err}")
        expect(report.get("source_checked", "").endswith("src.onnx"), f"the recorded source was compared: {report}")
        expect(report.get("compile_record", {}).get("source_model") == "src.onnx", f"record names the source: {report}")
        changed = change_one_weight(stale / "src.onnx", stale / "changed.onnx")
        code, report, err = check(str(stale / "src_ctx.onnx"), "--source", str(changed))
        expect(code == 3 and report.get("compatibility") == "UNSUPPORTED", f"--source changed: {code} {report} {err}")
        expect(any(r.startswith("stale: source changed") for r in report.get("reasons", [])), f"reason: {report}")
        # The binary alone carries the compile record too (format 1.1 compile_record section).
        code, report, err = check(str(stale / "src_vulkan.bin"))
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_OPTIMAL", f"fresh binary: {code} {report} {err}")
        code, report, err = check(str(stale / "src_vulkan.bin"), "--source", str(changed))
        expect(code == 3 and any(r.startswith("stale: source changed") for r in report.get("reasons", [])),
               f"binary with --source changed: {code} {report} {err}")
        shutil.copy(changed, stale / "src.onnx")
        code, report, err = check(str(stale / "src_ctx.onnx"))
        expect(code == 3 and report.get("compatibility") == "UNSUPPORTED", f"recorded source edited: {code} {report}")
        code, report, err = check(str(stale / "src_ctx.onnx"), "--source", str(changed), "--config", "kiln.vulkan.fp16=1")
        expect(any(r.startswith("stale: options changed") for r in report.get("reasons", [])), f"options: {report}")
        shutil.copy(model, stale / "src.onnx")
        code, report, err = check(str(stale / "src_ctx.onnx"), "--config", "kiln.vulkan.fp16=1")
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_PREFER_RECOMPILATION", f"options only: {report}")
        code, _, _ = kiln("check", str(stale / "src_ctx.onnx"), "--config", "kiln.vulkan.fp16=1", "--fail-on-suboptimal")
        expect(code == 3, f"options changed with --fail-on-suboptimal exits 3 (got {code})")
        # Another Kiln compiled it: check says so, a session warns, and refuses it under fail_on_suboptimal.
        import onnx
        ctx_model = onnx.load(str(stale / "src_ctx.onnx"))
        for prop in ctx_model.metadata_props:
            if prop.key == "kiln.compile_record":
                record = json.loads(prop.value)
                record["kiln_version"] = "0.0.1"
                prop.value = json.dumps(record)
        onnx.save(ctx_model, str(stale / "old_ctx.onnx"))
        code, report, err = check(str(stale / "old_ctx.onnx"))
        expect(code == 0 and report.get("compatibility") == "SUPPORTED_PREFER_RECOMPILATION", f"older Kiln: {report}")
        expect(any(r.startswith("stale: Kiln upgraded") for r in report.get("reasons", [])), f"reason: {report}")
        code, _, err = kiln("run", str(stale / "old_ctx.onnx"))
        expect(code == 0 and "Kiln upgraded" in err, f"a session loads it with a warning: {code} {err}")
        code, _, err = kiln("run", str(stale / "old_ctx.onnx"), "--config", "session.fail_on_suboptimal_compiled_model=1")
        expect(code == 1 and "stale: Kiln upgraded" in err, f"refused under fail_on_suboptimal: {code} {err}")

        code, _, err = kiln("check", str(stale / "src_ctx.onnx"), "--source", str(tmp / "absent.onnx"))
        expect(code == 1 and "absent.onnx" in err, f"a missing --source is an error naming it: {code} {err}")

        code, out, err = kiln("check", str(tmp / "nothing.onnx"))
        expect(code == 1 and "kiln: error" in err.lower() or "NO_SUCHFILE" in err, f"missing file: {code} {err}")
    return CHECKS.finish()


def change_one_weight(source, target):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(str(source))
    init = m.graph.initializer[0]
    array = numpy_helper.to_array(init).copy()
    array.flat[0] += 1
    init.CopyFrom(numpy_helper.from_array(array, init.name))
    onnx.save(m, str(target))
    return target


if __name__ == "__main__":
    sys.exit(main())
