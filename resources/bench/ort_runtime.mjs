// Loads onnxruntime-node from a folder holding node_modules/onnxruntime-node (tests/tools/fetch_models.sh installs
// it in <model cache>/ort): shared by ort_bench.mjs and ort_run.mjs.
import path from 'node:path';
import { createRequire } from 'node:module';

// The onnxruntime-node module, or null when it is not installed under `ortDir`.
export function loadOrt(ortDir) {
  const require = createRequire(path.join(path.resolve(ortDir), 'package.json'));
  try {
    return require('onnxruntime-node');
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}
