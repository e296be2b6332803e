// Times Kiln on one model with one EP (--ep cpu or vulkan): session creation (with its stage breakdown), first run,
// median run. The Kiln half of cpu_vs_onnxruntime.sh and vulkan_vs_cpu.sh (the same measurement as ort_bench.mjs).
//
// Usage: kiln_bench MODEL --input NAME=FILE.npy ... [--runs N] [--warmup W] [--threads T] [--ep cpu|vulkan]
//                   [--config KEY=VALUE]...
// Prints one JSON object on stdout: session_create_ms, first_run_ms, median_ms, min_ms, runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/session_options.h"
#include "kiln/tensor_io.h"
#include "kiln/timings.h"

namespace {

struct Args {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE
  int runs = 20;
  int warmup = 3;
  int threads = 2;
  std::string ep = "cpu";  // kiln.execution_providers
  std::vector<std::string> configs;  // KEY=VALUE session config entries
};

bool parseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--input" && hasValue) args.inputs.push_back(argv[++i]);
    else if (a == "--runs" && hasValue) args.runs = std::atoi(argv[++i]);
    else if (a == "--warmup" && hasValue) args.warmup = std::atoi(argv[++i]);
    else if (a == "--threads" && hasValue) args.threads = std::atoi(argv[++i]);
    else if (a == "--ep" && hasValue) args.ep = argv[++i];
    else if (a == "--config" && hasValue) args.configs.push_back(argv[++i]);
    else if (args.model.empty() && a.rfind("--", 0) != 0) args.model = a;
    else return false;
  }
  return !args.model.empty() && !args.inputs.empty() && args.runs > 0 && args.warmup >= 0 && args.threads > 0;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "kiln_bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parseArgs(argc, argv, args)) {
    std::fprintf(stderr, "usage: kiln_bench MODEL --input NAME=FILE.npy ... [--runs N] [--warmup W] [--threads T] [--ep cpu|vulkan] [--config KEY=VALUE]\n");
    return 2;
  }
  std::vector<kiln::NamedTensor> feeds;
  for (const std::string& spec : args.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) return fail("--input wants NAME=FILE.npy, got '" + spec + "'");
    auto tensor = kiln::readTensorFile(spec.substr(eq + 1));
    if (!tensor.isOk()) return fail(tensor.status().toString());
    feeds.push_back({spec.substr(0, eq), std::move(tensor).value()});
  }

  kiln::SessionOptions options;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"kiln.execution_providers", args.ep},
                                   {"kiln.intra_op_num_threads", std::to_string(args.threads)}}) {
    if (auto status = options.addConfigEntry(key, value); !status.isOk()) return fail(status.toString());
  }
  for (const std::string& spec : args.configs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) return fail("--config wants KEY=VALUE, got '" + spec + "'");
    if (auto status = options.addConfigEntry(spec.substr(0, eq), spec.substr(eq + 1)); !status.isOk()) {
      return fail(status.toString());
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto session = kiln::Session::create(args.model, options);
  const double sessionCreateMs = millisecondsSince(start);
  if (!session.isOk()) return fail(session.status().toString());

  start = std::chrono::steady_clock::now();
  auto first = (*session)->run(feeds);
  const double firstRunMs = millisecondsSince(start);
  if (!first.isOk()) return fail(first.status().toString());
  for (int i = 0; i < args.warmup; ++i) {
    if (auto r = (*session)->run(feeds); !r.isOk()) return fail(r.status().toString());
  }
  std::vector<double> times;
  for (int i = 0; i < args.runs; ++i) {
    start = std::chrono::steady_clock::now();
    auto r = (*session)->run(feeds);
    times.push_back(millisecondsSince(start));
    if (!r.isOk()) return fail(r.status().toString());
  }
  std::sort(times.begin(), times.end());
  const size_t mid = times.size() / 2;
  const double median = times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  // The session's own breakdown (Contracts' timing keys) beside the wall-clock numbers.
  std::string stages;
  kiln::forEachTiming((*session)->timings(), [&](std::string_view key, double value) {
    if (value > 0) stages += (stages.empty() ? "" : ",") + ("\"" + std::string(key) + "\":" + std::to_string(value));
  });
  std::printf("{\"runtime\":\"kiln %s\",\"session_create_ms\":%.4f,\"first_run_ms\":%.4f,\"median_ms\":%.4f,"
              "\"min_ms\":%.4f,\"runs\":%zu,\"stages\":{%s}}\n",
              args.ep.c_str(), sessionCreateMs, firstRunMs, median, times.front(), times.size(), stages.c_str());
  return 0;
}
