#!/usr/bin/env node
// The onnxruntime side of kiln-difftest: runs every case of a manifest in one process (starting node and loading
// onnxruntime-node takes ~0.4 s, more than most generated cases) and writes each case's outputs as .npy.
//
// Usage: node ort_batch.mjs ORT_DIR MANIFEST.json RESULTS.json
// MANIFEST: {"cases": [{"model": PATH, "inputs": {NAME: FILE.npy}, "out": DIR}], "unoptimized": BOOL, "prefix": P}
// Writes DIR/<P><k>.npy (P: "ort_" by default) per output k (the model's output order) and RESULTS:
// {"runtime": "...", "cases": [{"ok": true} | {"ok": true, "optimizer_error": MESSAGE} | {"ok": false, "error": MESSAGE}]} in manifest order;
// optimizer_error: onnxruntime refused the model with its optimizations on (its default) but ran it without them.
// Exit 3 when onnxruntime-node is missing, 2 for usage; a case onnxruntime refuses is reported in RESULTS, not fatal.
import fs from 'node:fs';
import path from 'node:path';

import { loadOrt } from '../../resources/bench/ort_runtime.mjs';
import { readNpy, writeNpy } from '../../resources/bench/npy.mjs';

async function runCase(ort, c, graphOptimizationLevel, prefix) {
  const feeds = {};
  for (const [name, file] of Object.entries(c.inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  const session = await ort.InferenceSession.create(c.model, { executionProviders: ['cpu'], graphOptimizationLevel });
  try {
    const results = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      const tensor = results[name];
      writeNpy(path.join(c.out, `${prefix}${k}.npy`), { type: tensor.type, dims: tensor.dims, data: tensor.data });
    });
  } finally {
    await session.release();
  }
}

async function main() {
  const [ortDir, manifestFile, resultsFile] = process.argv.slice(2);
  if (!resultsFile) {
    console.error('usage: node ort_batch.mjs ORT_DIR MANIFEST.json RESULTS.json');
    process.exit(2);
  }
  const ort = loadOrt(ortDir);
  if (!ort) {
    console.error(`ort_batch: onnxruntime-node is not installed under ${ortDir} (tests/tools/fetch_models.sh installs it)`);
    process.exit(3);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  const unoptimizedOnly = manifest.unoptimized === true;  // a second opinion: onnxruntime without its optimizations
  const prefix = manifest.prefix ?? 'ort_';
  const cases = [];
  for (const c of manifest.cases) {
    if (unoptimizedOnly) {
      try {
        await runCase(ort, c, 'disabled', prefix);
        cases.push({ ok: true });
      } catch (error) {
        cases.push({ ok: false, error: String(error.message ?? error) });
      }
      continue;
    }
    try {
      await runCase(ort, c, 'all', prefix);
      cases.push({ ok: true });
    } catch (error) {
      // onnxruntime's own graph optimizations sometimes turn a valid model into one it refuses: the unoptimized run
      // is then the reference, and the refusal is reported beside it.
      const optimized = String(error.message ?? error);
      try {
        await runCase(ort, c, 'disabled', prefix);
        cases.push({ ok: true, optimizer_error: optimized });
      } catch (again) {
        cases.push({ ok: false, error: optimized });
      }
    }
  }
  const runtime = `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim();
  fs.writeFileSync(resultsFile, JSON.stringify({ runtime, cases }));
}

main().catch((error) => {
  console.error(`ort_batch: ${error.message ?? error}`);
  process.exit(1);
});
