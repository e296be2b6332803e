// Replaying regression models: each folder under a root holds a reproducer kiln-difftest wrote (model.onnx, its
// inputs input_K.npy in graph-input order, onnxruntime's outputs expected_K.npy) for a disagreement since fixed;
// every side must now agree with the expected outputs. Needs no onnxruntime.
#pragma once

#include <string>

#include "case_runner.h"

namespace kiln::difftest {

// Runs every regression folder under `root` on `settings.sides`; prints one line per folder and side that
// disagrees; returns the number of disagreements (negative when `root` cannot be read).
int replayRegressions(const std::string& root, const RunnerSettings& settings);

}  // namespace kiln::difftest
