// kiln compare MODEL: one model under two configurations on the same inputs, every output compared; --bisect finds
// the first diverging node and --reproducer writes it as a one-node model (kiln/compare.h).
#include <cstdio>
#include <filesystem>

#include "cli_output.h"
#include "commands.h"
#include "compare_json.h"
#include "compare_output.h"
#include "kiln/compare.h"
#include "kiln/model_info.h"
#include "model_inputs.h"
#include "node_data.h"
#include "onnxruntime_node.h"
#include "progress_display.h"
#include "shape_syntax.h"

namespace kiln::cli {
namespace {

constexpr const char* kOnnxRuntime = "onnxruntime";

struct CompareArgs {
  std::string model, inputDir, ep, againstEp, against, onnxRuntimeDir, reproducer, nodeData;
  std::vector<std::string> inputs, shapes, configs, againstConfigs;
  double atol = Tolerance{}.atol, rtol = Tolerance{}.rtol, maxFractionBeyond = Tolerance{}.maxFractionBeyond;
  unsigned seed = 0;
  bool bisect = false;
  int64_t chunkValues = BisectOptions{}.maxValuesPerChunk;
  int64_t chunkMiB = BisectOptions{}.maxChunkBytes >> 20;
  CommonFlags flags;
};

Status usage(const std::string& message) { return Status(StatusCode::INVALID_ARGUMENT, message); }

// A Kiln side: `model` under the execution providers `eps` and the config entries, with the --shape entries.
Result<CompareSide> kilnSide(const CompareArgs& args, const std::string& model, const std::string& eps,
                             const std::vector<std::string>& configs) {
  CompareSide side;
  side.modelPath = model;
  side.label = eps.empty() ? "kiln (default providers)" : eps;
  KILN_RETURN_IF_ERROR(applyExecutionProviders(eps, side.options));
  KILN_RETURN_IF_ERROR(applyConfigEntries(configs, side.options));
  KILN_RETURN_IF_ERROR(applyShapeArguments(args.shapes, side.options));
  return side;
}

// The reference side the --against* flags describe. NO_SUCHFILE when onnxruntime-node is asked for and missing.
Result<CompareSide> referenceSide(const CompareArgs& args) {
  if (args.against == kOnnxRuntime) {
    if (!args.againstEp.empty() || !args.againstConfigs.empty()) {
      return usage("--against onnxruntime takes no --against-ep or --against-config");
    }
    KILN_ASSIGN_OR_RETURN(app::OnnxRuntimeNode runtime,
                          app::findOnnxRuntimeNode(args.onnxRuntimeDir, "bench/ort_run.mjs"));
    CompareSide side;
    side.label = kOnnxRuntime;
    side.modelPath = args.model;
    side.runner = app::onnxRuntimeRunner(runtime);
    return side;
  }
  if (args.against.empty() && args.againstEp.empty() && args.againstConfigs.empty()) {
    return usage("give the reference side: --against-ep EPS, --against-config KEY=VALUE, --against MODEL or "
                 "--against onnxruntime");
  }
  const std::string model = args.against.empty() ? args.model : args.against;
  KILN_ASSIGN_OR_RETURN(CompareSide side,
                        kilnSide(args, model, args.againstEp.empty() ? args.ep : args.againstEp, args.againstConfigs));
  if (!args.against.empty()) side.label = args.against + (args.againstEp.empty() ? "" : " on " + args.againstEp);
  return side;
}

// The line README.txt of a reproducer ends with: the compare command that shows the divergence on it.
std::string reproducerNote(const CompareArgs& args, const Reproducer& written) {
  if (!args.against.empty() && args.against != kOnnxRuntime) {
    return "The node is " + args.against + "'s; " + args.model + " computes it differently: compare a run of the "
           "same node of " + args.model + " on these inputs with expected_K.npy";
  }
  std::string line = "Compare it: kiln compare model.onnx";
  for (size_t k = 0; k < written.inputNames.size(); ++k) {
    line += " --input '" + written.inputNames[k] + "=" + std::filesystem::path(written.inputFiles[k]).filename().string() + "'";
  }
  if (!args.ep.empty()) line += " --ep " + args.ep;
  for (const auto& c : args.configs) line += " --config '" + c + "'";
  if (args.against == kOnnxRuntime) line += " --against onnxruntime";
  if (!args.againstEp.empty()) line += " --against-ep " + args.againstEp;
  for (const auto& c : args.againstConfigs) line += " --against-config '" + c + "'";
  char tolerance[96];
  std::snprintf(tolerance, sizeof tolerance, " --atol %g --rtol %g", args.atol, args.rtol);
  line += tolerance;
  if (args.maxFractionBeyond > 0) {
    std::snprintf(tolerance, sizeof tolerance, " --max-fraction-beyond %g", args.maxFractionBeyond);
    line += tolerance;
  }
  return line;
}

// Usage errors found before any run (a long bisect must not end in one).
Status checkArguments(const CompareArgs& args) {
  if (!args.reproducer.empty() && !args.bisect) return usage("--reproducer needs --bisect");
  std::error_code error;
  if (!args.reproducer.empty() && std::filesystem::exists(args.reproducer, error) &&
      !(std::filesystem::is_directory(args.reproducer, error) && std::filesystem::is_empty(args.reproducer, error))) {
    return usage("--reproducer '" + args.reproducer + "' is not a new or empty folder");
  }
  if (!args.nodeData.empty()) {
    const auto folder = std::filesystem::path(args.nodeData).parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder, error)) {
      return usage("--node-data '" + args.nodeData + "': no folder '" + folder.string() + "'");
    }
  }
  if (args.atol < 0 || args.rtol < 0) return usage("--atol and --rtol must be >= 0");
  if (!(args.maxFractionBeyond >= 0 && args.maxFractionBeyond < 1)) {
    return usage("--max-fraction-beyond must be a fraction of the elements, 0 <= F < 1 (0.02 allows 2%)");
  }
  return Status::ok();
}

// --bisect, --node-data and --reproducer: intermediate values compared, what they found added to `report`.
Result<BisectResult> scanIntermediates(const CompareArgs& args, const CompareSide& side, const CompareSide& reference,
                                       const std::vector<NamedTensor>& inputs, const Tolerance& tolerance,
                                       nlohmann::json& report) {
  BisectOptions options;
  options.stopAtFirstDivergence = args.nodeData.empty();  // per-node data needs every node
  options.maxValuesPerChunk = args.chunkValues;
  options.maxChunkBytes = args.chunkMiB << 20;
  ProgressDisplay progress(!args.flags.quiet);
  options.progress.onProgress = progress.callback();
  auto found = bisectModels(side, reference, inputs, tolerance, options);
  progress.finish();
  if (!found.isOk()) return found.status().withContext("--bisect");
  const BisectResult& bisect = *found;
  report["first_divergence"] =
      bisect.firstDivergence ? app::nodeDivergenceToJson(*bisect.firstDivergence) : nlohmann::json(nullptr);
  report["bisect"] = {{"chunks", bisect.chunks},
                      {"values_compared", bisect.valuesCompared},
                      {"values_skipped", bisect.valuesSkipped},
                      {"nodes_in_subgraphs_not_exposed", bisect.nodesInSubgraphs}};
  if (!args.nodeData.empty()) {
    const app::NodeData data = app::compareNodeData(bisect, args.model, tolerance, side.label, reference.label);
    KILN_RETURN_IF_ERROR(app::writeNodeData(args.nodeData, data));
    report["node_data"] = {{"file", args.nodeData}, {"nodes", data.nodes.size()}};
  }
  if (bisect.firstDivergence && !args.reproducer.empty()) {
    auto written = writeReproducer(reference, bisect.firstDivergence->node, inputs, args.reproducer);
    if (!written.isOk()) return written.status().withContext("--reproducer");
    // README.txt's last line: how to show the divergence on the reproducer itself.
    const std::string note = reproducerNote(args, *written) + "\n";
    if (FILE* readme = std::fopen(written->readmePath.c_str(), "a")) {
      std::fputs(note.c_str(), readme);
      std::fclose(readme);
    }
    report["reproducer"] = {{"dir", args.reproducer}, {"model", written->modelPath}, {"readme", written->readmePath},
                            {"inputs", written->inputFiles}, {"expected_outputs", written->expectedOutputFiles}};
  }
  return found;
}

// Which elements the tolerance line's bound applies to: "for every element", or the fraction that may miss it.
std::string toleranceScope(double maxFractionBeyond) {
  if (maxFractionBeyond <= 0) return "for every element";
  char text[128];
  std::snprintf(text, sizeof text, "for all but at most %g%% of each output's elements (--max-fraction-beyond %g; "
                "NaN/Inf mismatches never)", 100 * maxFractionBeyond, maxFractionBeyond);
  return text;
}

int compareCommand(const CompareArgs& args) {
  configureLogging(args.flags);
  if (Status s = checkArguments(args); !s.isOk()) return reportError(s, args.flags);
  auto side = kilnSide(args, args.model, args.ep, args.configs);
  if (!side.isOk()) return reportError(side.status(), args.flags);
  auto reference = referenceSide(args);
  if (!reference.isOk()) {
    if (reference.status().code() != StatusCode::NO_SUCHFILE) return reportError(reference.status(), args.flags);
    reportError(reference.status().withContext("--against onnxruntime"), args.flags);
    return kExitUsage;  // the reference the user asked for cannot run here: a setup problem, not a divergence
  }
  auto declared = inspectModel(args.model);
  if (!declared.isOk()) return reportError(declared.status(), args.flags);
  std::map<std::string, Shape> shapes;
  for (const auto& entry : args.shapes) {
    auto parsed = app::parseNamedShape(entry);
    if (!parsed.isOk()) return reportError(parsed.status().withContext("--shape"), args.flags);
    shapes[parsed->name] = parsed->dims;
  }
  auto inputs = app::prepareInputs(declared->inputs, args.inputs, shapes, args.inputDir, args.seed);
  if (!inputs.isOk()) return reportError(inputs.status(), args.flags);

  const Tolerance tolerance{args.atol, args.rtol, args.maxFractionBeyond};
  auto comparison = compareModels(*side, *reference, *inputs, tolerance);
  if (!comparison.isOk()) return reportError(comparison.status(), args.flags);
  bool passed = comparison->passed();

  nlohmann::json report = {{"model", args.model},
                           {"side", side->label},
                           {"reference", reference->label},
                           {"tolerance",
                            {{"atol", args.atol}, {"rtol", args.rtol}, {"max_fraction_beyond", args.maxFractionBeyond}}},
                           {"inputs", nlohmann::json::array()},
                           {"outputs", nlohmann::json::array()}};
  if (!args.against.empty() && args.against != kOnnxRuntime) report["reference_model"] = args.against;
  for (const auto& in : *inputs) {
    report["inputs"].push_back({{"name", in.name}, {"dtype", dataTypeName(in.tensor.dtype())}, {"shape", in.tensor.shape()}});
  }
  for (const auto& c : comparison->outputs) report["outputs"].push_back(app::tensorComparisonToJson(c));

  std::optional<BisectResult> bisect;
  if (args.bisect || !args.nodeData.empty()) {
    auto scanned = scanIntermediates(args, *side, *reference, *inputs, tolerance, report);
    if (!scanned.isOk()) return reportError(scanned.status(), args.flags);
    bisect = std::move(*scanned);
    if (args.bisect) passed = passed && !bisect->firstDivergence;  // --node-data alone judges the outputs only
  }
  report["passed"] = passed;

  if (args.flags.json) {
    printJson(report);
  } else {
    std::printf("model: %s\nside: %s\nreference: %s\ntolerance: |x - ref| <= %g + %g * |ref| %s\n", args.model.c_str(),
                side->label.c_str(), reference->label.c_str(), args.atol, args.rtol,
                toleranceScope(args.maxFractionBeyond).c_str());
    printComparisonTable(comparison->outputs);
    if (bisect) {
      printFirstDivergence(bisect->firstDivergence);
      std::printf("bisect: %lld values compared in %lld chunks", static_cast<long long>(bisect->valuesCompared),
                  static_cast<long long>(bisect->chunks));
      if (bisect->nodesInSubgraphs) {
        std::printf(", %lld nodes inside bodies not exposed (Scan)", static_cast<long long>(bisect->nodesInSubgraphs));
      }
      std::printf("\n");
      if (report.contains("reproducer")) std::printf("reproducer: %s\n", args.reproducer.c_str());
      if (report.contains("node_data")) std::printf("node data: %s\n", args.nodeData.c_str());
    }
    std::printf("%s\n", passed ? "PASS" : "FAIL");
  }
  return passed ? kExitOk : kExitFailure;
}

}  // namespace

void registerCompare(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Run a model under two configurations and compare every output");
  cmd->footer(
      "\nExit 0 when every element of every output passes |x - ref| <= atol + rtol * |ref| (with\n"
      "--max-fraction-beyond F: all but at most a fraction F of each output's elements, and no NaN/Inf mismatch;\n"
      "intermediate values of --bisect and --node-data are judged the same way) and, with --bisect, no intermediate\n"
      "value diverges (--node-data alone judges the outputs only); 1 otherwise, 2 for usage (or a missing\n"
      "onnxruntime-node).\n"
      "Float16 storage (--config kiln.vulkan.fp16=1) is checked against float32 with --atol 5e-3*max(1,max|ref|)\n"
      "--rtol 1e-2 --max-fraction-beyond 0.02 (engine/README.md).\n"
      "The reference side uses --ep's providers unless --against-ep is given; --config entries apply to the first\n"
      "side only.\n"
      "\nExamples:\n"
      "  kiln compare det.onnx --ep vulkan --against-ep cpu --shape x=1x3x640x640\n"
      "  kiln compare det_ctx.onnx --against det.onnx --input x=image.npy --json\n"
      "  kiln compare det.onnx --ep cpu --against onnxruntime --input-dir inputs/\n"
      "  kiln compare det.onnx --ep vulkan --against-ep cpu --atol 0 --rtol 0 --bisect --reproducer repro/\n"
      "  kiln compare det_fp16_ctx.onnx --against det_ctx.onnx --shape x=1x3x640x640 --atol 5e-3 --rtol 1e-2 "
      "--max-fraction-beyond 0.02\n"
      "  kiln compare det.onnx --ep cpu --against onnxruntime --node-data det_errors.json");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--input", args->inputs, "NAME=FILE input (.npy or .pb TensorProto); others are random");
  cmd->add_option("--input-dir", args->inputDir, "Folder holding <input name>.npy files");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x640x640 shape for inputs with free dimensions");
  cmd->add_option("--seed", args->seed, "Seed for random inputs");
  cmd->add_option("--ep", args->ep, "Execution providers of the first side, e.g. vulkan or vulkan,cpu");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry of the first side (repeatable)");
  cmd->add_option("--against-ep", args->againstEp, "Execution providers of the reference side");
  cmd->add_option("--against-config", args->againstConfigs, "KEY=VALUE config entry of the reference side (repeatable)");
  cmd->add_option("--against", args->against,
                  "Reference: another MODEL with the same inputs and outputs, or 'onnxruntime' (onnxruntime-node)");
  cmd->add_option("--onnxruntime-node", args->onnxRuntimeDir,
                  "Folder holding node_modules/onnxruntime-node (default $KILN_ONNXRUNTIME_NODE or "
                  "~/.cache/kiln/models/ort)");
  cmd->add_option("--atol", args->atol, "Absolute tolerance (default 1e-4)");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance (default 1e-3)");
  cmd->add_option("--max-fraction-beyond", args->maxFractionBeyond,
                  "Fraction F (0 <= F < 1) of each output's elements that may be beyond atol + rtol * |ref| "
                  "(default 0: every element must pass; NaN/Inf mismatches always fail)");
  cmd->add_flag("--bisect", args->bisect, "Find the first node whose outputs diverge while its inputs agree");
  cmd->add_option("--bisect-chunk", args->chunkValues, "Intermediate values exposed per pair of runs (default 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--bisect-chunk-mib", args->chunkMiB, "Their estimated size per side in MiB (default 512)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--reproducer", args->reproducer,
                  "With --bisect: write the diverging node as DIR/model.onnx with its inputs (DIR new or empty)");
  cmd->add_option("--node-data", args->nodeData,
                  "Write every node's error as per-node data JSON (kiln-node-data, kind compare) to FILE; compares "
                  "every intermediate value as --bisect does, without stopping at the first divergence");
  addCommonFlags(*cmd, args->flags);
  cmd->callback([&commands, args] { commands.run = [args] { return compareCommand(*args); }; });
}

}  // namespace kiln::cli
