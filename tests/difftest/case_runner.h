// Running one generated case on Kiln's sides (CPU EP, Vulkan EP, the compiled ctx model) and judging each against
// onnxruntime's outputs; on a disagreement, bisecting to the first diverging node and writing its reproducer with
// the engine's compare machinery.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/compare.h"
#include "onnxruntime_node.h"

namespace kiln::difftest {

enum class Side { CPU, VULKAN, CTX };
const char* sideName(Side side);

// One side's verdict on one case.
struct SideOutcome {
  Side side = Side::CPU;
  enum class Kind { AGREE, MISMATCH, KILN_ERROR } kind = Kind::AGREE;
  std::string detail;           // the error, or the worst output's comparison
  std::string divergingNode;    // bisect's first diverging node ("" when none was found)
  std::string divergingOp;      // its op type
  std::string reproducerDir;    // where its one-node reproducer went
  std::string knownReason;      // set when known_disagreements.txt explains it
};

struct CaseFiles {
  std::string dir;         // the case's folder
  std::string model;       // model.onnx in it
  std::vector<NamedTensor> inputs;
  std::vector<double> outputSlack;  // per graph output: the difference two correct runtimes may show
};

// An explained disagreement: side ("cpu", "vulkan", "ctx" or "*"), the diverging op ("*": any; for errors, the
// model's op kinds are searched), a substring of the detail ("" any), and why.
struct KnownDisagreement {
  std::string side, op, detailContains, reason;
};
// Reads known_disagreements.txt: lines "side | op | detail substring | reason", '#' comments.
Result<std::vector<KnownDisagreement>> readKnownDisagreements(const std::string& path);

struct RunnerSettings {
  std::vector<Side> sides;
  std::optional<app::OnnxRuntimeNode> onnxruntime;  // for bisecting; none: disagreements are not bisected
  bool bisect = true;
};

// Runs `files` on every side and compares with `reference` (onnxruntime's outputs, in the model's output order).
std::vector<SideOutcome> runCase(const CaseFiles& files, const std::vector<Tensor>& reference,
                                 const RunnerSettings& settings);

// Marks outcomes that `known` explains (opKinds: the op kinds the case was built from).
void explain(std::vector<SideOutcome>& outcomes, const std::vector<std::string>& opKinds,
             const std::vector<KnownDisagreement>& known);

}  // namespace kiln::difftest
