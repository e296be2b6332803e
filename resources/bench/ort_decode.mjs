#!/usr/bin/env node
// Greedy decode of an onnxruntime-genai style decoder on onnxruntime-node (CPU EP): the onnxruntime side of
// `kiln bench --decode N --compare-onnxruntime` and of tests/decoder. Installed with kiln (share/kiln/bench).
//
// Usage: node ort_decode.mjs ORT_DIR MODEL --decode N --prompt P [--threads T] [--save-logits DIR]
// The model takes input_ids, attention_mask and past_key_values.{i}.key/value [batch, kv_heads, past, head] and
// returns logits and present.{i}.key/value. The loop is the one app/cli/decode_bench.cpp runs, so the JSON fields
// match: a prefill of P prompt ids (7*i+3) % vocab with empty caches (past length 0), then N steps, each feeding
// the previous step's argmax token, the presents as pasts and an attention mask one longer, after one discarded
// generation (prefill + 1 step). Prints one JSON object with the fields of kiln's column: runtime,
// session_create_ms, time_to_first_token_ms, step_ms {count, min, median, max, mean, samples}, decode_ms,
// decode_tokens_per_s {median, overall}, bytes_per_step {input, output, where}, memory_kib {after_prefill, end}
// (the process's resident set), prompt_ids and generated_ids
// (N+1: the prefill's token, then one a step). kiln recomputes its own statistics from step_ms.samples.
// --save-logits writes the logits of the prefill and of every step as logits_<k>.npy (k = 0 for the prefill, all
// its positions) so a test can compare them element by element. Timings wrap feed building and the awaited session.run.
// Exit 3 when onnxruntime-node is not under ORT_DIR, 2 for usage, 1 when onnxruntime refuses the model.
import fs from 'node:fs';
import path from 'node:path';

import { loadOrt } from './ort_runtime.mjs';
import { writeNpy } from './npy.mjs';

const kMissingRuntime = 3;

// As ort_bench.mjs: 2 intra-op threads unless told, all graph optimizations, sequential execution.
const kOrtOptions = {
  executionProviders: ['cpu'],
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
};

function usage(message) {
  console.error(`ort_decode: ${message}`);
  console.error('usage: node ort_decode.mjs ORT_DIR MODEL --decode N --prompt P [--threads T] [--save-logits DIR]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { positional: [], decode: 0, prompt: 0, threads: 2, saveLogits: '' };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--decode') args.decode = Number(value());
    else if (a === '--prompt') args.prompt = Number(value());
    else if (a === '--threads') args.threads = Number(value());
    else if (a === '--save-logits') args.saveLogits = value();
    else args.positional.push(a);
  }
  if (args.positional.length !== 2) usage('expected ORT_DIR MODEL');
  if (!(Number.isInteger(args.decode) && args.decode > 0)) usage('--decode takes a step count above 0');
  if (!(Number.isInteger(args.prompt) && args.prompt > 0)) usage('--prompt takes a token count above 0');
  return args;
}

// The cache inputs: name -> [kv_heads, head] from the declared shape [batch, kv_heads, past, head].
function cacheInputs(session) {
  const caches = {};
  for (const meta of session.inputMetadata ?? []) {
    if (!meta.name.startsWith('past_key_values.')) continue;
    const [, kvHeads, , head] = meta.shape ?? [];
    if (typeof kvHeads !== 'number' || typeof head !== 'number') {
      throw new Error(`${meta.name} needs fixed kv_heads and head sizes, got [${meta.shape}]`);
    }
    caches[meta.name] = [kvHeads, head];
  }
  return caches;
}

function argmaxLast(logits) {
  const vocab = logits.dims[logits.dims.length - 1];
  const offset = logits.data.length - vocab;
  let best = 0;
  for (let v = 1; v < vocab; ++v) if (logits.data[offset + v] > logits.data[offset + best]) best = v;
  return best;
}

const bytesOf = (tensors) => Object.values(tensors).reduce((sum, t) => sum + t.data.byteLength, 0);

// One greedy generation: the prefill, then `steps` steps (the loop in the header comment).
async function generate(ort, session, caches, vocab, promptIds, steps, saveLogits) {
  const ids = (values) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), [1, values.length]);
  let feeds = { input_ids: ids(promptIds), attention_mask: ids(promptIds.map(() => 1)) };
  for (const [name, [kvHeads, head]] of Object.entries(caches)) {
    feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, head]);
  }
  const g = { generated: [], stepMs: [], prefillMs: 0, inputBytes: 0, outputBytes: 0 };
  let results = null;
  for (let step = 0; step <= steps; ++step) {
    const start = performance.now();
    if (step > 0) {
      const total = feeds.attention_mask.dims[1] + 1;
      const next = { input_ids: ids([g.generated[step - 1]]), attention_mask: ids(new Array(total).fill(1)) };
      for (const name of Object.keys(caches)) next[name] = results[name.replace('past_key_values', 'present')];
      feeds = next;
    }
    results = await session.run(feeds);
    g.generated.push(argmaxLast(results.logits));
    const ms = performance.now() - start;
    if (step === 0) {
      g.prefillMs = ms;
      g.residentAfterPrefill = Math.round(process.memoryUsage().rss / 1024);
    } else {
      g.stepMs.push(ms);
    }
    if (step === 1) {
      g.inputBytes = bytesOf(feeds);
      g.outputBytes = bytesOf(results);
    }
    if (saveLogits) {
      const { dims, data } = results.logits;
      writeNpy(path.join(saveLogits, `logits_${step}.npy`), { type: 'float32', dims, data });
    }
  }
  g.residentEnd = Math.round(process.memoryUsage().rss / 1024);
  return g;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const [ortDir, model] = args.positional;
  const ort = loadOrt(ortDir);
  if (!ort) {
    console.error(`ort_decode: onnxruntime-node is not installed under ${ortDir}`);
    process.exit(kMissingRuntime);
  }
  let start = performance.now();
  const session = await ort.InferenceSession.create(model, { ...kOrtOptions, intraOpNumThreads: args.threads });
  const sessionCreateMs = performance.now() - start;
  const caches = cacheInputs(session);
  if (!Object.keys(caches).length || !session.inputNames.includes('input_ids') ||
      !session.inputNames.includes('attention_mask')) {
    usage('the model has no input_ids, attention_mask and past_key_values.* inputs (not a decoder with a KV cache)');
  }
  const vocabDims = session.outputMetadata?.find((m) => m.name === 'logits')?.shape ?? [];
  const vocab = vocabDims[vocabDims.length - 1];
  if (typeof vocab !== 'number') throw new Error('logits needs a fixed vocabulary size');
  if (args.saveLogits) fs.mkdirSync(args.saveLogits, { recursive: true });

  const promptIds = Array.from({ length: args.prompt }, (_, i) => (7 * i + 3) % vocab);
  await generate(ort, session, caches, vocab, promptIds, 1, '');  // discarded warm-up, as kiln does
  const g = await generate(ort, session, caches, vocab, promptIds, args.decode, args.saveLogits);
  const sorted = [...g.stepMs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const decodeMs = g.stepMs.reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(),
    session_create_ms: sessionCreateMs,
    time_to_first_token_ms: g.prefillMs,
    step_ms: { count: sorted.length, min: sorted[0], median, max: sorted[sorted.length - 1],
               mean: decodeMs / sorted.length, samples: g.stepMs },
    decode_ms: decodeMs,
    decode_tokens_per_s: { median: 1000 / median, overall: (1000 * g.stepMs.length) / decodeMs },
    bytes_per_step: { input: g.inputBytes, output: g.outputBytes,
                      where: 'session boundary (inputs fed + outputs returned, first decode step)' },
    memory_kib: { after_prefill: g.residentAfterPrefill, end: g.residentEnd },
    prompt_ids: promptIds, generated_ids: g.generated,
  }));
  await session.release();
}

main().catch((error) => {
  console.error(`ort_decode: ${error.message ?? error}`);
  process.exit(1);
});
