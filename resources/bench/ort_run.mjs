#!/usr/bin/env node
// Runs one model once on onnxruntime-node (CPU EP, onnxruntime's default session options) and writes every output
// as .npy: the reference side of `kiln compare --against onnxruntime` and of the tests that compare against it.
// Installed with kiln (share/kiln/bench).
//
// Usage: node ort_run.mjs ORT_DIR MODEL OUT_DIR --input NAME=FILE.npy ... [--output NAME ...]
// ORT_DIR holds node_modules/onnxruntime-node (tests/tools/fetch_models.sh installs it in <model cache>/ort).
// --output limits the run to those outputs (default: all). Writes OUT_DIR/output_<k>.npy (k: position in the
// model's output list, so odd output names need no escaping) and prints one JSON object:
//   {"runtime": "onnxruntime-node 1.30.0", "outputs": [{"name", "file", "type", "dims"}]}
// Exit 3 when onnxruntime-node is not under ORT_DIR, 2 for usage, 1 when onnxruntime refuses the model or inputs.
import fs from 'node:fs';
import path from 'node:path';

import { loadOrt } from './ort_runtime.mjs';
import { readNpy, writeNpy } from './npy.mjs';

const kMissingRuntime = 3;

function usage(message) {
  console.error(`ort_run: ${message}`);
  console.error('usage: node ort_run.mjs ORT_DIR MODEL OUT_DIR --input NAME=FILE.npy ... [--output NAME ...]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { positional: [], inputs: [], outputs: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--input' || a === '--output') {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      (a === '--input' ? args.inputs : args.outputs).push(argv[++i]);
    } else {
      args.positional.push(a);
    }
  }
  if (args.positional.length !== 3) usage('expected ORT_DIR MODEL OUT_DIR');
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const [ortDir, model, outDir] = args.positional;
  const ort = loadOrt(ortDir);
  if (!ort) {
    console.error(`ort_run: onnxruntime-node is not installed under ${ortDir} (tests/tools/fetch_models.sh installs it)`);
    process.exit(kMissingRuntime);
  }
  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) usage(`--input ${spec}: expected NAME=FILE.npy`);
    const t = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(t.type, t.data, t.dims);
  }
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
  const wanted = args.outputs.length ? args.outputs : session.outputNames;
  for (const name of wanted) {
    if (!session.outputNames.includes(name)) throw new Error(`the model has no output '${name}'`);
  }
  const results = await session.run(feeds, wanted);
  fs.mkdirSync(outDir, { recursive: true });
  const outputs = wanted.map((name) => {
    const tensor = results[name];
    const file = path.join(outDir, `output_${session.outputNames.indexOf(name)}.npy`);
    writeNpy(file, { type: tensor.type, dims: tensor.dims, data: tensor.data });
    return { name, file, type: tensor.type, dims: tensor.dims };
  });
  console.log(JSON.stringify({ runtime: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(), outputs }));
  await session.release();
}

main().catch((error) => {
  console.error(`ort_run: ${error.message ?? error}`);
  process.exit(1);
});
