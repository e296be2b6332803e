// onnxruntime-node as a reference runtime for kiln bench and kiln compare: finding node, the package and Kiln's
// shipped scripts (share/kiln/bench/*.mjs), and running a model once through ort_run.mjs.
#pragma once

#include <string>

#include "child_process.h"

#include "kiln/compare.h"
#include "kiln/status.h"

namespace kiln::app {

// What running onnxruntime-node needs.
struct OnnxRuntimeNode {
  std::string node;    // the node executable
  std::string script;  // the Kiln script to run (an absolute path)
  std::string ortDir;  // the folder holding node_modules/onnxruntime-node
};

// A file of the apps' data folder (build_tree.h's dataDirectory: $KILN_DATA_DIR, the build tree's resources/, or
// <prefix>/share/kiln beside the installed executable); "" when it is not there.
std::string findResource(const std::string& relative);
// The ORT_DIR to use: `explicitDir`, else $KILN_ONNXRUNTIME_NODE, else the model cache tests/tools/fetch_models.sh
// fills ($KILN_CACHE_DIR or ~/.cache/kiln, then models/ort).
std::string onnxRuntimeDir(const std::string& explicitDir);
// node, the script `relativeScript` (e.g. "bench/ort_run.mjs") and onnxruntime-node under onnxRuntimeDir(explicitDir);
// NO_SUCHFILE saying what is missing ("node is not on PATH", ...) otherwise.
Result<OnnxRuntimeNode> findOnnxRuntimeNode(const std::string& explicitDir, const std::string& relativeScript);

// A kiln::ExternalRunner that runs a model once on onnxruntime-node (CPU EP, default options) with ort_run.mjs,
// passing inputs and outputs as .npy files in a private temp folder.
ExternalRunner onnxRuntimeRunner(const OnnxRuntimeNode& runtime);

}  // namespace kiln::app
