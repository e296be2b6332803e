// The ONNX backend conformance harness: runs node test cases (model.onnx + test_data_set_0/*.pb) through a
// Kiln session and compares every output with the expected one. Shared by `kiln conformance` and the tests.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/progress.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::conformance {

enum class Outcome { Passed, Failed, ExpectedFailure, UnexpectedPass, Skipped };
const char* outcomeName(Outcome outcome);

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::Failed;
  std::string detail;      // why it failed, or the expected-failure reason
  double milliseconds = 0;
};

struct Options {
  std::string directory;              // folder of test cases (e.g. /usr/share/libonnx-testdata/data/node)
  std::string executionProvider = "cpu";  // "cpu" or "vulkan"
  std::string filter;                 // ECMAScript regex on case names; empty = all
  std::map<std::string, std::string> expectedFailures;  // case name -> reason
  std::map<std::string, std::string> configEntries;  // extra session config entries for every case
  double rtol = 1e-3;
  double atol = 1e-7;
  // Run the cases in worker processes (re-executed kiln, see worker.h): a crash or hang fails one case, not the run.
  bool isolate = true;
  std::string workerProgram;          // with isolate: the kiln executable to re-execute (required)
  int workerBatchSize = 50;           // cases per worker process
  std::function<void(const CaseResult&)> onCase;
  // ("conformance cases", done, total) before the first case and after each one.
  std::function<void(const ProgressEvent&)> onProgress;
};

struct Summary {
  int passed = 0;
  int failed = 0;  // unexpected failures only (including unexpected passes of listed cases)
  int expectedFailures = 0;
  int skipped = 0;  // cases the EP cannot take whole (nodes would fall back to the CPU EP)
  std::vector<CaseResult> cases;
};

// Parses an expected-failure list: one `case_name  reason` per line, '#' starts a comment.
std::map<std::string, std::string> parseExpectedFailures(const std::string& text);
// The built-in list for an EP ("cpu", "vulkan"), compiled in from app/conformance/expected_failures_<ep>.txt.
std::map<std::string, std::string> builtinExpectedFailures(const std::string& executionProvider);

// Compares one output with its expected value: dtype, shape, NaN positions, |a-e| <= atol + rtol*|e|.
// Returns an empty string when they match, otherwise what differs.
std::string compareTensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

// What one case came to before expected failures are considered: Passed, Failed or Skipped.
struct CaseRun {
  Outcome outcome = Outcome::Failed;
  std::string detail;  // the mismatch or error, or why the case was skipped
};

// Runs one case folder in this process. For an EP other than "cpu" the session gets
// kiln.execution_providers=<ep>,cpu and session.disable_cpu_ep_fallback=1: a case whose nodes would not all run
// on that EP is Skipped (the detail names them), not failed.
CaseRun runCase(const std::string& caseDirectory, const Options& options);

// Runs every case under options.directory matching options.filter, in name order (in worker processes when
// options.isolate). NO_SUCHFILE without the folder, INVALID_ARGUMENT for a bad filter or isolation without a
// workerProgram, FAIL when a worker cannot start, EP_FAIL for --ep vulkan with KILN_REQUIRE_VULKAN=1 and no device.
Result<Summary> runConformance(const Options& options);

}  // namespace kiln::conformance
