#!/usr/bin/env node
// Generates deterministic inputs for the real-model tests and the matching onnxruntime-node outputs.
//
// Usage: node ort_reference.mjs CACHE_DIR [--force]
// CACHE_DIR is what fetch_models.sh filled (models + ort/). Writes CACHE_DIR/ref/:
//   ppocr_det/inputs/x.npy, ppocr_det/outputs/<output>.npy (1x3x640x640 page), same for ppocr_det_crop (1x3x256x416)
//   silero_vad/step<k>/inputs/{input,state,sr}.npy, silero_vad/step<k>/outputs/{output,stateN}.npy
//     (state of step k>0 is ORT's stateN of step k-1: the test feeds its own state back instead)
//   STAMP.json last, so an interrupted run is redone. Exit 77 when onnxruntime-node is missing
// (fetch_models.sh was skipped offline), unless KILN_REQUIRE_MODELS=1.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { writeNpy } from '../../resources/bench/npy.mjs';
import { makeSileroChunk, makeTextPage } from './synthetic_inputs.mjs';

export const kSileroSteps = 8;
const kSkip = 77;

// ORT as the design notes prescribe for reference runs: 2 intra-op threads, all optimizations, sequential.
export const kOrtOptions = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 2,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
};

// Loads onnxruntime-node from CACHE_DIR/ort (installed by fetch_models.sh); null when absent.
export function loadOrt(cacheDir) {
  const require = createRequire(path.join(cacheDir, 'ort', 'package.json'));
  try {
    return require('onnxruntime-node');
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function toNpy(tensor) {
  return { type: tensor.type, dims: tensor.dims, data: tensor.data };
}

// The top-left corner of a page as a second, non-square input shape (dynamic H and W, multiples of 32).
export function cropPage(page, height, width) {
  const [, channels, pageHeight, pageWidth] = page.dims;
  const data = new Float32Array(channels * height * width);
  for (let c = 0; c < channels; ++c) {
    for (let y = 0; y < height; ++y) {
      const from = (c * pageHeight + y) * pageWidth;
      data.set(page.data.subarray(from, from + width), (c * height + y) * width);
    }
  }
  return { type: 'float32', dims: [1, channels, height, width], data };
}

async function runPpocrDet(ort, cacheDir, refDir) {
  const session = await ort.InferenceSession.create(path.join(cacheDir, 'ch_PP-OCRv4_det_infer.onnx'), kOrtOptions);
  const page = makeTextPage();
  for (const [name, x] of [['ppocr_det', page], ['ppocr_det_crop', cropPage(page, 256, 416)]]) {
    writeNpy(path.join(refDir, name, 'inputs', 'x.npy'), x);
    const results = await session.run({ x: new ort.Tensor('float32', x.data, x.dims) });
    for (const output of session.outputNames) {
      const t = results[output];
      writeNpy(path.join(refDir, name, 'outputs', `${output}.npy`), toNpy(t));
      let max = 0, above = 0;
      for (const v of t.data) { max = Math.max(max, v); if (v > 0.3) ++above; }
      console.log(`${name}: ${output} [${t.dims}] max ${max.toFixed(4)}, ${(100 * above / t.data.length).toFixed(1)}% > 0.3`);
    }
  }
  await session.release();
}

async function runSileroVad(ort, cacheDir, outDir) {
  const session = await ort.InferenceSession.create(path.join(cacheDir, 'silero_vad_v5.onnx'), kOrtOptions);
  let state = { type: 'float32', dims: [2, 1, 128], data: new Float32Array(2 * 128) };
  const sr = { type: 'int64', dims: [], data: BigInt64Array.from([16000n]) };
  const probabilities = [];
  for (let step = 0; step < kSileroSteps; ++step) {
    const dir = path.join(outDir, `step${step}`);
    const input = makeSileroChunk(step);
    writeNpy(path.join(dir, 'inputs', 'input.npy'), input);
    writeNpy(path.join(dir, 'inputs', 'state.npy'), state);
    writeNpy(path.join(dir, 'inputs', 'sr.npy'), sr);
    const feeds = {};
    for (const [name, t] of Object.entries({ input, state, sr })) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    const results = await session.run(feeds);
    for (const name of session.outputNames) writeNpy(path.join(dir, 'outputs', `${name}.npy`), toNpy(results[name]));
    probabilities.push(results.output.data[0].toFixed(4));
    state = toNpy(results.stateN);
  }
  console.log(`silero_vad: ${kSileroSteps} steps, speech probability per step: ${probabilities.join(' ')}`);
  await session.release();
}

async function main() {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const cacheDir = args.find((a) => !a.startsWith('--'));
  if (!cacheDir) {
    console.error('usage: node ort_reference.mjs CACHE_DIR [--force]');
    process.exit(2);
  }
  const required = process.env.KILN_REQUIRE_MODELS === '1';
  const models = ['ch_PP-OCRv4_det_infer.onnx', 'silero_vad_v5.onnx'].map((m) => path.join(cacheDir, m));
  const ort = loadOrt(cacheDir);
  const missing = models.filter((m) => !fs.existsSync(m));
  if (!ort || missing.length) {
    const what = !ort ? `onnxruntime-node is not installed in ${path.join(cacheDir, 'ort')}` : `missing ${missing.join(', ')}`;
    console.error(`ort_reference: ${what}; run tests/tools/fetch_models.sh ${cacheDir} first`);
    process.exit(required ? 1 : kSkip);
  }

  // Redo everything when any ingredient changed: these scripts, the models, or the ORT version.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const stamp = JSON.stringify({
    scripts: ['ort_reference.mjs', 'synthetic_inputs.mjs', '../../resources/bench/npy.mjs'].map((f) => sha256(path.join(here, f))),
    models: models.map(sha256),
    ort: ort.env.versions?.common ?? 'unknown',
    sileroSteps: kSileroSteps,
  }, null, 1);
  const refDir = path.join(cacheDir, 'ref');
  const stampFile = path.join(refDir, 'STAMP.json');
  if (!force && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) {
    console.log(`ort_reference: references in ${refDir} are up to date`);
    return;
  }
  fs.rmSync(refDir, { recursive: true, force: true });
  const started = performance.now();
  await runPpocrDet(ort, cacheDir, refDir);
  await runSileroVad(ort, cacheDir, path.join(refDir, 'silero_vad'));
  fs.writeFileSync(stampFile, stamp);
  console.log(`ort_reference: wrote ${refDir} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((error) => {
    console.error(`ort_reference: ${error.stack ?? error}`);
    process.exit(1);
  });
}
