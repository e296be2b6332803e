#include "case_runner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/compiler.h"
#include "kiln/config_keys.h"
#include "kiln/provider_names.h"

namespace kiln::difftest {
namespace {

namespace fs = std::filesystem;

SessionOptions optionsFor(Side side) {
  SessionOptions options;
  // "vulkan" alone: the CPU EP stays the last resort for nodes without a Vulkan kernel, as in onnxruntime.
  const char* eps = side == Side::CPU ? kCpuProviderShortName : kVulkanProviderShortName;
  (void)options.addConfigEntry(config::kExecutionProviders, eps);
  return options;
}

double maxAbs(const Tensor& t) {
  if (t.dtype() != DataType::FLOAT) return 1;
  double m = 0;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (std::isfinite(p[i])) m = std::max(m, static_cast<double>(std::fabs(p[i])));
  }
  return m;
}

// The tolerance for one output: relative to its magnitude (sums of many products round differently), plus what
// the generator says two correct runtimes may differ by. Vulkan's float math is looser than the CPU's (GLSL
// exp/tanh/division are not correctly rounded).
Tolerance toleranceFor(Side side, const Tensor& reference, double slack) {
  const double scale = std::max(1.0, maxAbs(reference));
  Tolerance t;
  t.atol = (side == Side::CPU ? 1e-4 : 1e-3) * scale + 1.01 * slack;
  t.rtol = side == Side::CPU ? 1e-3 : 2e-3;
  return t;
}

std::string describe(const TensorComparison& c) {
  std::ostringstream s;
  s << c.name << ": ";
  if (c.missing) s << "missing";
  else if (c.shapeMismatch) s << "shape mismatch";
  else if (c.dtypeMismatch) s << "dtype " << dataTypeName(c.dtype) << " vs " << dataTypeName(c.referenceDtype);
  else
    s << c.beyondTolerance << "/" << c.elements << " beyond tolerance, max abs error " << c.maxAbsError
      << (c.nanMismatches + c.infMismatches ? " (NaN/Inf mismatch)" : "");
  return s.str();
}

// The ctx side: compile the model for Vulkan into the case folder, then the model that runs is the ctx model.
Result<std::string> compileCtx(const CaseFiles& files) {
  ModelCompilationOptions options(optionsFor(Side::VULKAN));
  const std::string ctx = (fs::path(files.dir) / "model_ctx.onnx").string();
  options.setInputModelPath(files.model).setOutputModelPath(ctx);
  auto compiled = compileModel(options);
  if (!compiled.isOk()) return compiled.status();
  return ctx;
}

void bisect(SideOutcome& outcome, const CaseFiles& files, const RunnerSettings& settings, const Tolerance& tolerance) {
  if (!settings.bisect || !settings.onnxruntime) return;
  // A ctx model cannot expose its intermediate values: its source model on Vulkan shows where it goes wrong.
  const Side run = outcome.side == Side::CTX ? Side::VULKAN : outcome.side;
  CompareSide side{sideName(run), files.model, optionsFor(run), {}};
  CompareSide reference{"onnxruntime", files.model, {}, app::onnxRuntimeRunner(*settings.onnxruntime)};
  auto result = bisectModels(side, reference, files.inputs, tolerance);
  if (!result.isOk()) {
    outcome.detail += "; bisect failed: " + result.status().message();
    return;
  }
  if (!result->firstDivergence) return;
  outcome.divergingNode = result->firstDivergence->node;
  outcome.divergingOp = result->firstDivergence->opType;
  const std::string dir = (fs::path(files.dir) / ("reproducer_" + std::string(sideName(outcome.side)))).string();
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  const std::string note = "kiln compare model.onnx --ep " + std::string(sideName(run)) +
                           " --against onnxruntime shows the divergence (found by kiln-difftest)";
  auto written = writeReproducer(reference, outcome.divergingNode, files.inputs, dir, note);
  if (written.isOk()) outcome.reproducerDir = dir;
}

SideOutcome runSideOf(Side side, const CaseFiles& files, const std::vector<Tensor>& reference,
                      const RunnerSettings& settings) {
  SideOutcome outcome;
  outcome.side = side;
  std::string model = files.model;
  if (side == Side::CTX) {
    auto ctx = compileCtx(files);
    if (!ctx.isOk()) {
      outcome.kind = SideOutcome::Kind::KILN_ERROR;
      outcome.detail = "compile: " + ctx.status().toString();
      return outcome;
    }
    model = *ctx;
  }
  CompareSide compareSide{sideName(side), model, optionsFor(side), {}};
  auto outputs = runSide(compareSide, files.inputs);
  if (!outputs.isOk()) {
    outcome.kind = SideOutcome::Kind::KILN_ERROR;
    outcome.detail = outputs.status().toString();
    return outcome;
  }
  Tolerance worstTolerance;
  for (size_t k = 0; k < reference.size(); ++k) {
    const Tolerance tolerance = toleranceFor(side, reference[k], files.outputSlack[k]);
    if (k >= outputs->size()) {
      outcome.kind = SideOutcome::Kind::MISMATCH;
      outcome.detail = "output " + std::to_string(k) + " missing";
      break;
    }
    const TensorComparison c = compareTensors((*outputs)[k].name, (*outputs)[k].tensor, reference[k], tolerance);
    if (!c.passed()) {
      outcome.kind = SideOutcome::Kind::MISMATCH;
      outcome.detail = describe(c);
      worstTolerance = tolerance;
      break;
    }
  }
  if (outcome.kind == SideOutcome::Kind::MISMATCH) bisect(outcome, files, settings, worstTolerance);
  return outcome;
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

}  // namespace

const char* sideName(Side side) {
  switch (side) {
    case Side::CPU: return "cpu";
    case Side::VULKAN: return "vulkan";
    case Side::CTX: return "ctx";
  }
  return "?";
}

std::vector<SideOutcome> runCase(const CaseFiles& files, const std::vector<Tensor>& reference,
                                 const RunnerSettings& settings) {
  std::vector<SideOutcome> outcomes;
  for (Side side : settings.sides) outcomes.push_back(runSideOf(side, files, reference, settings));
  return outcomes;
}

Result<std::vector<KnownDisagreement>> readKnownDisagreements(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot read " + path);
  std::vector<KnownDisagreement> known;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string field; std::getline(s, field, '|');) fields.push_back(trim(field));
    if (fields.size() != 4 || fields[3].empty())
      return Status(StatusCode::INVALID_ARGUMENT,
                    path + ":" + std::to_string(number) + ": expected 'side | op | detail substring | reason'");
    known.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return known;
}

void explain(std::vector<SideOutcome>& outcomes, const std::vector<std::string>& opKinds,
             const std::vector<KnownDisagreement>& known) {
  for (SideOutcome& o : outcomes) {
    if (o.kind == SideOutcome::Kind::AGREE) continue;
    for (const KnownDisagreement& k : known) {
      const bool side = k.side == "*" || k.side == sideName(o.side);
      const bool op = k.op == "*" || k.op == o.divergingOp ||
                      (o.divergingOp.empty() && std::find(opKinds.begin(), opKinds.end(), k.op) != opKinds.end());
      const bool detail = k.detailContains.empty() || o.detail.find(k.detailContains) != std::string::npos;
      if (side && op && detail) {
        o.knownReason = k.reason;
        break;
      }
    }
  }
}

}  // namespace kiln::difftest
