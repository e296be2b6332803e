#!/usr/bin/env node
// Times onnxruntime-node (CPU EP) on one model: the onnxruntime side of `kiln bench --compare-onnxruntime`,
// tests/bench/cpu_vs_onnxruntime.sh and vulkan_vs_cpu.sh. Installed with kiln (share/kiln/bench).
//
// Usage: node ort_bench.mjs ORT_DIR MODEL --input NAME=FILE.npy ... [--runs N] [--warmup W] [--threads T]
//                            [--duration S] [--warmup-time S]
// ORT_DIR holds node_modules/onnxruntime-node (tests/tools/fetch_models.sh installs it in <model cache>/ort).
// Prints one JSON object: runtime, session_create_ms, first_run_ms, inference_ms (every timed run), median_ms,
// min_ms, runs, and memory_kib (the process's resident set after session creation, after the first run and at the
// end, and its peak: process.memoryUsage().rss and resourceUsage().maxRSS, as kiln bench-worker reports them).
// --duration S times runs for S seconds instead of --runs; --warmup-time S discards runs for S seconds first. Timings wrap the awaited session.run call, so they include onnxruntime-node's per-call overhead
// (tens of microseconds).

import { loadOrt } from './ort_runtime.mjs';
import { readNpy } from './npy.mjs';

// ORT as the design notes prescribe for reference runs (the same as tests/tools/ort_reference.mjs): 2 intra-op
// threads unless --threads says otherwise, all graph optimizations, sequential execution.
const kOrtOptions = {
  executionProviders: ['cpu'],
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
};

function parseArgs(argv) {
  const args = { positional: [], inputs: [], runs: 20, warmup: 3, threads: 2, duration: 0, warmupTime: 0 };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--input') args.inputs.push(argv[++i]);
    else if (a === '--runs') args.runs = Number(argv[++i]);
    else if (a === '--warmup') args.warmup = Number(argv[++i]);
    else if (a === '--threads') args.threads = Number(argv[++i]);
    else if (a === '--duration') args.duration = Number(argv[++i]);
    else if (a === '--warmup-time') args.warmupTime = Number(argv[++i]);
    else args.positional.push(a);
  }
  if (args.positional.length !== 2 || !args.inputs.length || !(args.runs > 0)) {
    console.error('usage: node ort_bench.mjs ORT_DIR MODEL --input NAME=FILE.npy ... [--runs N] [--warmup W] [--threads T]');
    process.exit(2);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const [ortDir, model] = args.positional;
  const ort = loadOrt(ortDir);
  if (!ort) throw new Error(`onnxruntime-node is not installed under ${ortDir} (tests/tools/fetch_models.sh installs it)`);
  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    const t = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(t.type, t.data, t.dims);
  }
  let start = performance.now();
  const session = await ort.InferenceSession.create(model, { ...kOrtOptions, intraOpNumThreads: args.threads });
  const sessionCreateMs = performance.now() - start;
  const kib = (bytes) => Math.round(bytes / 1024);
  const memory = { after_session_create: kib(process.memoryUsage().rss) };
  start = performance.now();
  await session.run(feeds);
  const firstRunMs = performance.now() - start;
  memory.after_first_inference = kib(process.memoryUsage().rss);
  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const warmupStart = performance.now();
  while (performance.now() - warmupStart < args.warmupTime * 1000) await session.run(feeds);
  const times = [];
  const timedStart = performance.now();
  for (let i = 0; args.duration > 0 ? i === 0 || performance.now() - timedStart < args.duration * 1000 : i < args.runs; ++i) {
    start = performance.now();
    await session.run(feeds);
    times.push(performance.now() - start);
  }
  memory.end = kib(process.memoryUsage().rss);
  memory.peak = process.resourceUsage().maxRSS;  // KiB, as getrusage's ru_maxrss
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(JSON.stringify({
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(),
    session_create_ms: sessionCreateMs, first_run_ms: firstRunMs, inference_ms: times, median_ms: median, min_ms: times[0], runs: times.length,
    memory_kib: memory,
  }));
  await session.release();
}

main().catch((error) => {
  console.error(`ort_bench: ${error.stack ?? error}`);
  process.exit(1);
});
