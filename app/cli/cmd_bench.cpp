// kiln bench MODEL: cold versus cached session creation (bench.h explains the two cache axes). Every measured run
// but in-process is a fresh `kiln bench-worker` process, so nothing a previous run left in memory helps it; the
// epctx modes load ctx models this command compiles first with `kiln compile` (also in a child process).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench_compare_command.h"
#include "bench_environment.h"
#include "bench_report.h"
#include "child_process.h"
#include "cli_output.h"
#include "commands.h"
#include "decode_bench.h"
#include "kiln/device.h"
#include "onnxruntime_node.h"
#include "progress_display.h"

namespace kiln::cli {

using app::BenchMode;
using app::BenchReport;
using app::BenchSample;
using app::benchInputFileName;
using app::ChildResult;
using app::ChildSpec;
using app::kBenchModes;
using app::kOnnxRuntimeMode;
using app::runChild;
using app::selfExecutable;
namespace fs = std::filesystem;
namespace {

// The modes and driver-cache states a bench runs when not told: every one on Vulkan; on other EPs (no pipelines, no
// ctx binary) the cold and in-process rows, and no driver cache to vary.
constexpr const char* kAllModes = "cold,pipeline-cache,epctx-embed,epctx-file,in-process";
constexpr const char* kModesWithoutVulkan = "cold,in-process";

struct BenchArgs {
  std::string model;
  std::string modes;         // empty: the EP's default (above)
  std::string driverCaches;  // empty: cold,warm on Vulkan, cold otherwise
  std::string ep = app::kVulkanProvider;
  int runs = 10;
  int inferences = 5;
  double durationSeconds = 0;  // steady inferences for this long per run instead of `inferences`
  double warmupSeconds = 0;    // discarded steady inferences for this long before them
  std::vector<std::string> compare;  // BASE.json NEW.json: compare two saved results instead of measuring
  BenchCompareArgs compareOptions;
  bool inferencesGiven = false;
  std::vector<std::string> shapes, inputs, configs;
  std::string device;
  bool autotune = false;
  bool compareOnnxRuntime = false;
  std::string onnxRuntimeDir;
  std::string csv;
  std::string workDir;
  double timeoutSeconds = 600;
  CommonFlags flags;
  // --decode N: greedy generation in this process instead of session-creation rows (decode_bench.h).
  DecodeBenchArgs decode;
  bool decodeGiven = false;
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string tail(const std::string& text, size_t bytes = 1500) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// One row of the report being measured: which program runs, on what, with which driver cache.
struct Plan {
  std::string mode, driverCache;
  std::vector<std::string> argv;
  fs::path warmDriverCache;  // the shared folder of a `warm` row
  BenchMode* result = nullptr;
};

class BenchRunner {
 public:
  BenchRunner(const BenchArgs& args, fs::path work) : args_(args), work_(std::move(work)) {}

  int run() {
    const std::vector<std::string> providers = splitList(args_.ep);
    const bool vulkan = contains(providers, app::kVulkanProvider);
    const std::vector<std::string> modes =
        splitList(!args_.modes.empty() ? args_.modes : vulkan ? kAllModes : kModesWithoutVulkan);
    const std::vector<std::string> caches =
        splitList(!args_.driverCaches.empty() ? args_.driverCaches : vulkan ? "cold,warm" : "cold");
    for (const auto& mode : modes) {
      if (std::find(std::begin(kBenchModes), std::end(kBenchModes), mode) == std::end(kBenchModes)) {
        return usage("unknown mode '" + mode + "' (modes: cold, pipeline-cache, epctx-embed, epctx-file, in-process)");
      }
      if (!vulkan && mode != "cold" && mode != "in-process") {
        return usage("mode '" + mode + "' needs the Vulkan EP (--ep " + args_.ep + " runs cold and in-process only)");
      }
    }
    if (args_.durationSeconds > 0 && args_.inferencesGiven) {
      return usage("--duration and --inferences are alternatives: give one");
    }
    for (const auto& cache : caches) {
      if (cache != "cold" && cache != "warm") return usage("--driver-cache takes cold and/or warm, got '" + cache + "'");
    }
    if (modes.empty() || caches.empty()) return usage("--modes and --driver-cache need at least one entry");
    if (!fs::is_regular_file(args_.model)) {
      return reportError(Status(StatusCode::NO_SUCHFILE, "no model file at '" + args_.model + "'"), args_.flags);
    }
    report_.model = args_.model;
    report_.runs = args_.runs;
    report_.inferences = args_.inferences;
    report_.durationSeconds = args_.durationSeconds;
    report_.warmupSeconds = args_.warmupSeconds;
    report_.executionProviders = args_.ep;
    report_.autotune = args_.autotune;
    report_.provenance = {{"kiln", app::kilnBuildFacts()},
                          {"command_line", app::processCommandLine()},
                          {"machine", app::machineFacts()},
                          {"environment", app::resultEnvironment()},
                          {"vulkan", nullptr}};
    report_.device = vulkan ? describeDevice() : "CPU: " + report_.provenance["machine"].value("cpu_model", std::string("?"));

    ProgressDisplay progress(!args_.flags.quiet);
    std::vector<Plan> plans;
    const bool wantsEmbed = contains(modes, "epctx-embed"), wantsFile = contains(modes, "epctx-file");
    for (const char* embed : {"1", "0"}) {
      if (!(embed[0] == '1' ? wantsEmbed : wantsFile)) continue;
      progress.update({std::string("compile (embed mode ") + embed + ")", 0, 0});
      Status compiled = compile(embed[0] == '1' ? "embed" : "file", embed);
      if (!compiled.isOk()) return reportError(compiled, args_.flags);
    }
    report_.modes.reserve(modes.size() * caches.size() + 2);  // Plan::result points into it
    for (const auto& mode : modes) {
      if (mode == "in-process") continue;
      for (const auto& cache : caches) plans.push_back(plan(mode, cache));
    }
    const bool withOrt = args_.compareOnnxRuntime && prepareOnnxRuntime();

    // The discarded warm-up of every row (it also writes the pipeline cache file and primes `warm` driver caches),
    // then the measured runs in turn, so that drift on a busy machine spreads over every row alike.
    int done = 0;
    for (auto& p : plans) {
      progress.update({"warm-up", done++, static_cast<int64_t>(plans.size())});
      std::vector<std::string> argv = p.argv;
      if (&p == &plans.front()) argv.insert(argv.end(), {"--dump-inputs", (work_ / "inputs").string()});
      fs::create_directories(work_ / "inputs");
      auto sample = measure(p, argv, "warm-up");
      if (!sample.isOk()) return reportError(sample.status(), args_.flags);
    }
    if (withOrt) plans.push_back(ortPlan());
    const int64_t total = static_cast<int64_t>(plans.size()) * args_.runs;
    done = 0;
    for (int r = 0; r < args_.runs; ++r) {
      for (auto& p : plans) {
        progress.update({"runs", done++, total});
        if (p.mode == kOnnxRuntimeMode && r == 0) {
          auto warmup = measure(p, p.argv, "warm-up");  // node's own start-up and file cache, discarded
          if (!warmup.isOk()) return reportError(warmup.status(), args_.flags);
        }
        auto sample = measure(p, p.argv, "run " + std::to_string(r + 1));
        if (!sample.isOk()) return reportError(sample.status(), args_.flags);
        p.result->samples.push_back(std::move(sample).value());
      }
    }
    progress.update({"runs", total, total});
    if (contains(modes, "in-process")) {
      progress.update({"in-process", 0, 0});
      Status s = inProcess();
      if (!s.isOk()) return reportError(s, args_.flags);
    }
    progress.finish();
    // Report order: the modes as kBenchModes lists them, onnxruntime-node last.
    auto rank = [](const BenchMode& m) {
      return std::find(std::begin(kBenchModes), std::end(kBenchModes), m.name) - std::begin(kBenchModes);
    };
    std::stable_sort(report_.modes.begin(), report_.modes.end(),
                     [&](const BenchMode& a, const BenchMode& b) { return rank(a) < rank(b); });
    return print();
  }

 private:
  static bool contains(const std::vector<std::string>& items, const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
  }

  int usage(const std::string& message) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, message), args_.flags);
  }

  // The device the runs use, as kiln devices names it (the compiled binary's target when the epctx modes ran).
  std::string describeDevice() {
    auto devices = listVulkanDevices();
    if (!devices.isOk() || devices->empty()) return "no Vulkan device";
    const VulkanDeviceDescription* chosen = nullptr;
    for (const auto& d : *devices) {
      if (!args_.device.empty() && (d.name == args_.device || std::to_string(d.index) == args_.device)) chosen = &d;
    }
    for (const auto& d : *devices) {
      if (!chosen && d.type != VulkanDeviceType::CPU) chosen = &d;
    }
    if (!chosen) chosen = &devices->front();
    report_.provenance["vulkan"] = {{"device", chosen->name},
                                    {"type", vulkanDeviceTypeName(chosen->type)},
                                    {"api_version", chosen->apiVersion},
                                    {"driver_name", chosen->driverName},
                                    {"driver_info", chosen->driverInfo},
                                    {"driver_version", chosen->driverVersion}};
    return chosen->name + " (" + chosen->driverName + " " + chosen->driverInfo + ")";
  }

  // The worker's steady-inference options: a count, or a duration, and the time-based warm-up.
  std::vector<std::string> steadyOptions() const {
    std::vector<std::string> out = {"--inferences", std::to_string(args_.inferences)};
    if (args_.durationSeconds > 0) out = {"--duration", std::to_string(args_.durationSeconds)};
    if (args_.warmupSeconds > 0) out.insert(out.end(), {"--warmup-time", std::to_string(args_.warmupSeconds)});
    return out;
  }

  std::vector<std::string> passThrough(bool withAutotune) const {
    std::vector<std::string> out = steadyOptions();
    for (const auto& s : args_.shapes) out.insert(out.end(), {"--shape", s});
    for (const auto& c : args_.configs) out.insert(out.end(), {"--config", c});
    if (!args_.device.empty()) out.insert(out.end(), {"--config", "kiln.vulkan.device=" + args_.device});
    if (withAutotune && args_.autotune) out.insert(out.end(), {"--config", "kiln.vulkan.autotune=1"});
    return out;
  }

  fs::path ctxModel(const std::string& folder) const {
    return work_ / folder / (fs::path(args_.model).stem().string() + "_ctx.onnx");
  }

  // kiln compile MODEL -o WORK/<folder>/<stem>_ctx.onnx in a child with an empty driver cache.
  Status compile(const std::string& folder, const char* embedMode) {
    std::vector<std::string> argv = {selfExecutable(), "compile", args_.model, "-o", ctxModel(folder).string(),
                                     "--embed-mode", embedMode, "--json", "--quiet"};
    for (const auto& s : args_.shapes) argv.insert(argv.end(), {"--shape", s});
    for (const auto& c : args_.configs) argv.insert(argv.end(), {"--config", c});
    if (!args_.device.empty()) argv.insert(argv.end(), {"--device", args_.device});
    if (args_.autotune) argv.push_back("--autotune");
    const ChildSpec spec = childSpec(argv, freshDriverCache());
    KILN_ASSIGN_OR_RETURN(ChildResult child, runChild(spec));
    if (!child.exited() || child.exitCode != 0) {
      return Status(StatusCode::FAIL, "kiln compile for the epctx modes failed (" +
                                          child.describeEnd(args_.timeoutSeconds) + "): " + tail(child.err));
    }
    nlohmann::json result = nlohmann::json::parse(child.out, nullptr, false);
    if (result.is_discarded()) return Status(StatusCode::FAIL, "kiln compile printed no JSON: " + tail(child.out));
    if (embedMode[0] == '0') {
      report_.compile = {{"wall_ms", child.wallMs},
                         {"timings", result.value("timings", nlohmann::json::object())},
                         {"counters", result.value("counters", nlohmann::json::object())},
                         {"epcontext_nodes", result.value("epcontext_nodes", 0)}};
      if (result.contains("binary")) report_.compile["binary_bytes"] = result["binary"].value("file_size", 0);
      if (result.contains("binary") && result["binary"].contains("device")) {
        const auto& d = result["binary"]["device"];
        report_.device = d.value("name", report_.device) + " (" + d.value("driver_name", std::string()) + " " +
                         d.value("driver_info", std::string()) + ")";
      }
    }
    return Status::ok();
  }

  Plan plan(const std::string& mode, const std::string& cache) {
    report_.modes.push_back({mode, cache, {}});
    Plan p{mode, cache, {}, {}, &report_.modes.back()};
    std::string target = args_.model;
    std::vector<std::string> extra = passThrough(mode == "cold" || mode == "pipeline-cache");
    if (mode == "pipeline-cache") {
      extra.insert(extra.end(), {"--config", "kiln.vulkan.pipeline_cache_path=" +
                                                 (work_ / ("pipelines-" + cache + ".vkcache")).string()});
    } else if (mode == "epctx-embed") {
      target = ctxModel("embed").string();
    } else if (mode == "epctx-file") {
      target = ctxModel("file").string();
    }
    p.argv = {selfExecutable(), "bench-worker", target, "--ep", args_.ep};
    for (const auto& i : args_.inputs) p.argv.insert(p.argv.end(), {"--input", i});
    p.argv.insert(p.argv.end(), extra.begin(), extra.end());
    if (cache == "warm") p.warmDriverCache = work_ / "driver" / (mode + "-warm");
    return p;
  }

  // onnxruntime-node, if node and the package are there (app/common/onnxruntime_node.h finds them).
  bool prepareOnnxRuntime() {
    auto runtime = app::findOnnxRuntimeNode(args_.onnxRuntimeDir, "bench/ort_bench.mjs");
    if (!runtime.isOk()) {
      if (!args_.flags.quiet) {
        std::fprintf(stderr, "kiln: warning: --compare-onnxruntime skipped: %s\n", runtime.status().message().c_str());
      }
      return false;
    }
    nodePath_ = runtime->node;
    ortScript_ = runtime->script;
    ortDir_ = runtime->ortDir;
    return true;
  }

  Plan ortPlan() {
    report_.modes.push_back({kOnnxRuntimeMode, "n/a", {}});
    Plan p{kOnnxRuntimeMode, "n/a", {nodePath_, ortScript_, ortDir_, args_.model}, {}, &report_.modes.back()};
    for (const auto& name : inputNames_) {
      p.argv.insert(p.argv.end(), {"--input", name + "=" + (work_ / "inputs" / benchInputFileName(name)).string()});
    }
    p.argv.insert(p.argv.end(), {"--runs", std::to_string(std::max(1, args_.inferences)), "--warmup", "0",
                                 "--threads", "2"});
    if (args_.durationSeconds > 0) p.argv.insert(p.argv.end(), {"--duration", std::to_string(args_.durationSeconds)});
    if (args_.warmupSeconds > 0) p.argv.insert(p.argv.end(), {"--warmup-time", std::to_string(args_.warmupSeconds)});
    return p;
  }

  fs::path freshDriverCache() { return work_ / "driver" / ("fresh-" + std::to_string(freshCount_++)); }

  // A measured child: Kiln's default caches under the work folder, the driver's shader cache (Mesa's, and
  // NVIDIA's) in `driverCache`, and a cache the user disabled enabled again, since the bench sets its state.
  ChildSpec childSpec(const std::vector<std::string>& argv, const fs::path& driverCache) const {
    ChildSpec spec;
    spec.argv = argv;
    spec.environment = {{"XDG_CACHE_HOME", (work_ / "xdg").string()},
                        {"MESA_SHADER_CACHE_DIR", driverCache.string()},
                        {"__GL_SHADER_DISK_CACHE_PATH", driverCache.string()}};
    spec.unsetEnvironment = {"MESA_SHADER_CACHE_DISABLE"};
    spec.timeoutSeconds = args_.timeoutSeconds;
    spec.ownProcessGroup = false;  // kiln-studio cancels a bench by killing its process group: workers included
    return spec;
  }

  Result<BenchSample> measure(Plan& p, const std::vector<std::string>& argv, const std::string& what) {
    const fs::path driverCache = p.driverCache == "warm" ? p.warmDriverCache : freshDriverCache();
    fs::create_directories(driverCache);
    const ChildSpec spec = childSpec(argv, driverCache);
    auto child = runChild(spec);
    if (p.driverCache == "cold") fs::remove_all(driverCache);
    if (!child.isOk()) return child.status();
    const std::string row = p.mode + "/" + p.driverCache + " " + what;
    if (!child->exited() || child->exitCode != 0) {
      return Status(StatusCode::FAIL, row + " failed (" + child->describeEnd(args_.timeoutSeconds) + "): " +
                                          tail(child->err));
    }
    nlohmann::json out = nlohmann::json::parse(child->out, nullptr, false);
    if (out.is_discarded()) return Status(StatusCode::FAIL, row + " printed no JSON: " + tail(child->out + child->err));
    BenchSample sample;
    if (p.mode == kOnnxRuntimeMode) {
      sample.sessionCreateMs = out.value("session_create_ms", 0.0);
      sample.firstInferenceMs = out.value("first_run_ms", 0.0);
      sample.inferenceMs = out.value("inference_ms", std::vector<double>{});
      sample.memory = memoryFrom(out);
      return sample;
    }
    if (out.contains("inputs") && inputNames_.empty()) inputNames_ = out["inputs"].get<std::vector<std::string>>();
    return sampleFrom(out["sessions"].front());
  }

  // {"memory_kib": {"after_session_create", "after_first_inference", "end", "peak"}} of a worker's (or ort_bench's)
  // output; a reading that is missing or not a number stays absent.
  static app::BenchMemory memoryFrom(const nlohmann::json& owner) {
    app::BenchMemory memory;
    const auto object = owner.find("memory_kib");
    if (object == owner.end() || !object->is_object()) return memory;
    auto reading = [&](const char* key) -> std::optional<int64_t> {
      const auto value = object->find(key);
      if (value == object->end() || !value->is_number()) return std::nullopt;
      return static_cast<int64_t>(value->get<double>());
    };
    memory.afterSessionCreateKib = reading("after_session_create");
    memory.afterFirstInferenceKib = reading("after_first_inference");
    memory.endKib = reading("end");
    memory.peakKib = reading("peak");
    return memory;
  }

  static BenchSample sampleFrom(const nlohmann::json& session) {
    BenchSample sample;
    sample.sessionCreateMs = session.value("session_create_ms", 0.0);
    sample.firstInferenceMs = session.value("first_inference_ms", 0.0);
    sample.inferenceMs = session.value("inference_ms", std::vector<double>{});
    sample.timings = session.value("timings", nlohmann::json::object());
    sample.counters = session.value("counters", nlohmann::json::object());
    sample.memory = memoryFrom(session);
    return sample;
  }

  // A second (and later) session in one process: the in-process artifact caches (pipeline registry, SPIR-V
  // cache) at work. One process creates runs + 1 sessions; the first is the discarded warm-up, and it primes the
  // driver's cache, so the row is `warm`.
  Status inProcess() {
    report_.modes.push_back({"in-process", "warm", {}});
    std::vector<std::string> argv = {selfExecutable(), "bench-worker", args_.model, "--ep", args_.ep, "--sessions",
                                     std::to_string(args_.runs + 1)};
    for (const auto& i : args_.inputs) argv.insert(argv.end(), {"--input", i});
    const std::vector<std::string> extra = passThrough(true);
    argv.insert(argv.end(), extra.begin(), extra.end());
    const fs::path driverCache = freshDriverCache();
    fs::create_directories(driverCache);
    const ChildSpec spec = childSpec(argv, driverCache);
    KILN_ASSIGN_OR_RETURN(ChildResult child, runChild(spec));
    if (!child.exited() || child.exitCode != 0) {
      return Status(StatusCode::FAIL, "in-process run failed (" + child.describeEnd(args_.timeoutSeconds) + "): " +
                                          tail(child.err));
    }
    nlohmann::json out = nlohmann::json::parse(child.out, nullptr, false);
    if (out.is_discarded() || !out.contains("sessions")) return Status(StatusCode::FAIL, "in-process run printed no JSON");
    const auto& sessions = out["sessions"];
    for (size_t s = 1; s < sessions.size(); ++s) report_.modes.back().samples.push_back(sampleFrom(sessions[s]));
    return Status::ok();
  }

  int print() {
    if (!args_.csv.empty()) {
      std::ofstream file(args_.csv, std::ios::binary | std::ios::trunc);
      file << toCsv(report_);
      if (!file) return reportError(Status(StatusCode::FAIL, "cannot write --csv file '" + args_.csv + "'"), args_.flags);
    }
    if (args_.flags.json) {
      printJson(toJson(report_));
    } else {
      std::fputs(toTable(report_).c_str(), stdout);
    }
    return kExitOk;
  }

  const BenchArgs& args_;
  fs::path work_;
  BenchReport report_;
  int freshCount_ = 0;
  std::vector<std::string> inputNames_;
  std::string nodePath_, ortScript_, ortDir_;
};

// kiln bench --decode: the options that shape session-creation rows mean nothing to it and are refused.
int runDecode(const BenchArgs& args) {
  if (!args.compare.empty() || !args.modes.empty() || !args.driverCaches.empty() || !args.inputs.empty() ||
      !args.shapes.empty()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT,
                              "--decode takes no --compare, --modes, --driver-cache, --input or --shape: it feeds "
                              "the decoder's own prompt and caches"),
                       args.flags);
  }
  if (args.model.empty()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "kiln bench --decode needs a MODEL"), args.flags);
  }
  DecodeBenchArgs decode = args.decode;
  decode.model = args.model;
  decode.ep = args.ep;
  decode.configs = args.configs;
  decode.device = args.device;
  decode.compareOnnxRuntime = args.compareOnnxRuntime;
  decode.onnxRuntimeDir = args.onnxRuntimeDir;
  decode.timeoutSeconds = args.timeoutSeconds;
  decode.flags = args.flags;
  return runDecodeBench(decode);
}

int runBench(const BenchArgs& args) {
  configureLogging(args.flags);
  if (args.decodeGiven) return runDecode(args);
  if (!args.compare.empty()) {
    if (!args.model.empty()) {
      return reportError(Status(StatusCode::INVALID_ARGUMENT, "--compare takes BASE.json NEW.json and no model"),
                         args.flags);
    }
    return runBenchCompare(args.compare[0], args.compare[1], args.compareOptions, args.flags);
  }
  if (args.model.empty()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "kiln bench needs a MODEL (or --compare BASE.json NEW.json)"),
                       args.flags);
  }
  SessionOptions shapesOnly;  // the workers take the shapes; a malformed one is a usage error before any work
  if (Status s = applyShapeArguments(args.shapes, shapesOnly); !s.isOk()) return reportError(s, args.flags);
  fs::path work;
  std::error_code error;
  if (!args.workDir.empty()) {
    work = fs::absolute(args.workDir, error);
    fs::create_directories(work, error);
    if (error || !fs::is_directory(work)) {
      return reportError(Status(StatusCode::INVALID_ARGUMENT, "--work-dir '" + args.workDir + "' is not a folder"),
                         args.flags);
    }
  } else {
    std::string pattern = (fs::temp_directory_path(error) / "kiln-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      return reportError(Status(StatusCode::FAIL, "cannot create a temporary folder for the bench"), args.flags);
    }
    work = pattern;
  }
  const int code = BenchRunner(args, work).run();
  if (args.workDir.empty()) fs::remove_all(work, error);
  return code;
}

}  // namespace

void registerBench(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmark cold versus cached session creation in fresh processes");
  bench->footer(
      "Modes (Kiln's caches): cold (none), pipeline-cache (kiln.vulkan.pipeline_cache_path), epctx-embed and\n"
      "epctx-file (a ctx model from kiln compile, binary embedded or beside it), in-process (a second session in\n"
      "one process). Driver cache, a separate axis: cold (empty per process) and warm (primed by the warm-up).\n"
      "Never run it in CI: it creates hundreds of sessions. Every timing row has n, min, mean, median with its 95%\n"
      "confidence interval (order statistics), p90/p95/p99 when there are enough runs (10/20/100), max, stddev\n"
      "and CV; memory is the workers' resident set (VmRSS after each phase, peak from getrusage).\n"
      "--compare BASE.json NEW.json: ratio of medians per mode and phase with a bootstrap 95% interval and a\n"
      "verdict; exit 1 on a significant slowdown beyond --fail-above, 2 on unreadable or mismatched files.\n"
      "--decode N: greedy generation in this process with an onnxruntime-genai style decoder (input_ids,\n"
      "attention_mask, past_key_values.* -> logits, present.*): a prefill of --prompt ids (7*i+3) % vocab, then N\n"
      "steps feeding present back as past; time to first token, per-step latency, tokens/s and generated ids.\n\n"
      "Examples:\n"
      "  kiln bench model.onnx\n"
      "  kiln bench model.onnx --ep cpu --runs 20 --duration 0.5 --warmup-time 0.2 --json > new.json\n"
      "  kiln bench --compare base.json new.json --threshold 5 --fail-above 10\n"
      "  kiln bench det.onnx --shape x=1x3x640x640 --runs 5 --json > det_bench.json\n"
      "  kiln bench vad.onnx --input input=chunk.npy --input sr=sr.npy --input state=state.npy --compare-onnxruntime\n"
      "  kiln bench det.onnx --modes cold,epctx-file --driver-cache warm --csv det.csv\n"
      "  kiln bench --decode 32 --prompt 16 decoder.onnx --ep cpu --compare-onnxruntime");
  bench->add_option("model", args->model, "ONNX model file (not with --compare)");
  bench->add_option("--modes", args->modes,
                    "Comma-separated modes to run (default: all on Vulkan, cold,in-process on other EPs)");
  bench->add_option("--driver-cache", args->driverCaches,
                    "Driver cache states: cold,warm (default both on Vulkan, cold otherwise)");
  bench->add_option("--ep", args->ep, "Execution providers of every run, e.g. cpu (default vulkan)");
  bench->add_option("--runs", args->runs, "Measured runs per row after one discarded warm-up (default 10)")
      ->check(CLI::PositiveNumber);
  CLI::Option* inferences =
      bench->add_option("--inferences", args->inferences, "Steady inferences per run after the first (default 5)")
          ->check(CLI::NonNegativeNumber);
  bench->add_option("--duration", args->durationSeconds,
                    "Steady inferences for S seconds per run instead of --inferences (at least one)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--warmup-time", args->warmupSeconds,
                    "Discarded steady inferences for S seconds per run before the timed ones")
      ->check(CLI::PositiveNumber);
  bench->add_option("--compare", args->compare, "BASE.json NEW.json: compare two saved --json results")
      ->expected(2);
  bench->add_option("--threshold", args->compareOptions.thresholdPct,
                    "--compare: changes below PCT percent are never significant (default 5)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--fail-above", args->compareOptions.failAbovePct,
                    "--compare: exit 1 when a phase is significantly slower by more than PCT percent")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--shape", args->shapes, "NAME=1x3x640x640 shape for a random input with free dimensions");
  bench->add_option("--input", args->inputs, "NAME=FILE input (.npy or .pb); others are random");
  bench->add_option("--config", args->configs, "KEY=VALUE session config entry for every run (repeatable)");
  bench->add_option("--device", args->device, "Vulkan device index or name (kiln devices)");
  bench->add_flag("--autotune", args->autotune, "Autotune when compiling (cold rows pay for it; epctx rows load it)");
  bench->add_flag("--compare-onnxruntime", args->compareOnnxRuntime,
                  "Add onnxruntime-node (CPU EP, 2 threads) as a row, if node and the package are installed");
  bench->add_option("--onnxruntime-node", args->onnxRuntimeDir,
                    "Folder holding node_modules/onnxruntime-node (default $KILN_ONNXRUNTIME_NODE or "
                    "~/.cache/kiln/models/ort)");
  CLI::Option* decode = bench->add_option("--decode", args->decode.steps,
                                          "N greedy decode steps after a prefill, timed per step (a KV-cache decoder)");
  bench->add_option("--prompt", args->decode.prompt, "--decode: prompt tokens of the prefill (default 16)");
  bench->add_flag("--no-io-binding", args->decode.noIoBinding,
                  "--decode: feed each present back through host memory (Session::run) instead of an IoBinding that "
                  "leaves it on the device");
  bench->add_option("--save-logits", args->decode.saveLogits,
                    "--decode: write each step's last logits as DIR/logits_<k>.npy (onnxruntime's in DIR/onnxruntime)");
  bench->add_option("--csv", args->csv, "Also write one CSV row per mode to FILE");
  bench->add_option("--work-dir", args->workDir, "Keep compiled models and caches in DIR (default: a temporary folder)");
  bench->add_option("--timeout", args->timeoutSeconds, "Seconds one run may take (default 600)")
      ->check(CLI::PositiveNumber);
  addCommonFlags(*bench, args->flags);
  bench->callback([&commands, args, inferences, decode] {
    args->inferencesGiven = inferences->count() > 0;
    args->decodeGiven = decode->count() > 0;
    commands.run = [args] { return runBench(*args); };
  });
  registerBenchWorker(app, commands);
}

}  // namespace kiln::cli
