// kiln bench --decode: greedy generation timed step by step (decode_bench.h). The loop, which resources/bench/
// ort_decode.mjs repeats for onnxruntime-node so that both columns measure the same work:
//   prompt ids (7*i + 3) % vocab for i < P (deterministic, spread over the vocabulary, no tokenizer needed);
//   prefill: input_ids [1, P], attention_mask of P ones, every past_key_values.* empty ([1, kv_heads, 0, head]);
//   then N steps: input_ids [1, 1] = the previous argmax, attention_mask one longer, each present.* fed back as the
//   matching past_key_values.*; position_ids, when the model has it, counts on from the cached length.
// Each timing wraps building the feeds, the run and the argmax. One discarded generation (prefill + 1 step) comes
// first, so one-time work (lazy allocations, page faults on the weights) lands in neither column's numbers.
#include "decode_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>

#include "bench_report.h"
#include "bench_statistics.h"
#include "child_process.h"
#include "kiln/tensor_io.h"
#include "kiln/version.h"
#include "onnxruntime_node.h"
#include "process_memory.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kPastPrefix = "past_key_values.";
constexpr std::string_view kPresentPrefix = "present.";
// Two byte counts per decode step: what crosses the session boundary in host memory (inputs fed from the host,
// outputs returned to it; device values passed back and forth through an IoBinding do not count), comparable with
// onnxruntime-node's, and what the session itself copied between host and device memory (Session::transfers()).
constexpr const char* kBytesWhere = "session boundary: host inputs fed + host outputs returned (first decode step)";

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One KV-cache input and the output that feeds it on the next step.
struct CacheSlot {
  std::string past, present;
  DataType dtype = DataType::FLOAT;
  int64_t kvHeads = 0, head = 0;
};

struct DecoderInterface {
  std::vector<CacheSlot> caches;
  bool positionIds = false;
  int64_t vocab = 0;
};

// What one runtime did: the same fields for Kiln and for onnxruntime-node.
struct Generation {
  std::string runtime;
  std::vector<int64_t> promptIds, generatedIds;  // generatedIds: the prefill's token, then one per step
  double sessionCreateMs = 0, prefillMs = 0;
  std::vector<double> stepMs;
  int64_t inputBytes = 0, outputBytes = 0;
  std::string bytesWhere = kBytesWhere;
  // Kiln only: bytes the session copied host -> device and device -> host in each decode step (Session::transfers).
  std::vector<uint64_t> stepHostToDevice, stepDeviceToHost;
  bool ioBinding = false;
  int64_t vocab = 0;
  // Resident set (KiB) after the prefill and after the last step: a cache that grows each step must not make the
  // process grow by more than the caches themselves.
  std::optional<int64_t> residentAfterPrefillKib, residentEndKib;
  nlohmann::json partitions = nullptr;
};

Status notADecoder(const std::string& model, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT,
                "'" + model + "' is not a decoder with a KV cache (" + why +
                    "): kiln bench --decode needs onnxruntime-genai's interface, inputs input_ids, attention_mask and "
                    "past_key_values.{i}.key/value [batch, kv_heads, past, head], outputs logits and present.{i}.*");
}

Result<DecoderInterface> describeDecoder(const Session& session, const std::string& model) {
  DecoderInterface decoder;
  bool ids = false, mask = false;
  for (const auto& input : session.inputs()) {
    if (input.name == "input_ids") {
      ids = true;
    } else if (input.name == "attention_mask") {
      mask = true;
    } else if (input.name == "position_ids") {
      decoder.positionIds = true;
    } else if (input.name.starts_with(kPastPrefix)) {
      if (input.shape.size() != 4 || !input.shape[1].isFixed() || !input.shape[3].isFixed()) {
        return notADecoder(model, input.name + " is " + describeValue(input) + ", not [batch, kv_heads, past, head]");
      }
      decoder.caches.push_back({input.name, std::string(kPresentPrefix) + input.name.substr(kPastPrefix.size()),
                                input.dtype, input.shape[1].value, input.shape[3].value});
    } else {
      return notADecoder(model, "it has an input '" + input.name + "' the loop cannot feed");
    }
  }
  if (!ids || !mask) return notADecoder(model, "no input_ids or attention_mask input");
  if (decoder.caches.empty()) return notADecoder(model, "no past_key_values.* inputs");
  for (const auto& cache : decoder.caches) {
    const auto& outs = session.outputs();
    if (std::none_of(outs.begin(), outs.end(), [&](const ValueMetadata& o) { return o.name == cache.present; })) {
      return notADecoder(model, "no output " + cache.present + " for " + cache.past);
    }
  }
  for (const auto& output : session.outputs()) {
    if (output.name != "logits") continue;
    if (output.dtype != DataType::FLOAT || output.shape.size() != 3 || !output.shape[2].isFixed()) {
      return notADecoder(model, "logits is " + describeValue(output) + ", not float32[batch, seq, vocab]");
    }
    decoder.vocab = output.shape[2].value;
  }
  if (decoder.vocab <= 0) return notADecoder(model, "no logits output");
  return decoder;
}

int64_t argmaxLastRow(const Tensor& logits, int64_t vocab) {
  const float* row = logits.data<float>() + (logits.numel() - vocab);
  return std::max_element(row, row + vocab) - row;
}

Tensor ids(const std::vector<int64_t>& values) {
  return Tensor::fromVector<int64_t>({1, static_cast<int64_t>(values.size())}, values);
}

// The feeds of one step: input_ids, attention_mask and position_ids (host tensors) for `tokens` after `cached`.
std::vector<NamedTensor> tokenFeeds(const DecoderInterface& decoder, const std::vector<int64_t>& tokens, int64_t cached) {
  const int64_t total = cached + static_cast<int64_t>(tokens.size());
  std::vector<NamedTensor> feeds = {{"input_ids", ids(tokens)},
                                    {"attention_mask", ids(std::vector<int64_t>(size_t(total), 1))}};
  if (decoder.positionIds) {
    std::vector<int64_t> positions(tokens.size());
    std::iota(positions.begin(), positions.end(), cached);
    feeds.push_back({"position_ids", ids(positions)});
  }
  return feeds;
}

// One step through `binding`: the token feeds and each cache (empty on the prefill, else the previous present.*,
// which an IoBinding keeps on the device); logits come back to host memory. Outputs in bound order: logits first.
Status bindingStep(Session& session, IoBinding& binding, const DecoderInterface& decoder,
                   const std::vector<NamedTensor>& tokens, bool prefill) {
  for (const auto& feed : tokens) binding.bindInput(feed.name, feed.tensor);
  const std::vector<NamedTensor> previous = binding.outputs();
  for (size_t c = 0; c < decoder.caches.size(); ++c) {
    const CacheSlot& cache = decoder.caches[c];
    binding.bindInput(cache.past, prefill ? Tensor(cache.dtype, {1, cache.kvHeads, 0, cache.head})
                                          : previous.at(c + 1).tensor);
  }
  return session.runWithBinding(binding);
}

// One greedy generation of `steps` steps after a `prompt`-token prefill (the loop at the top of this file).
Result<Generation> generate(Session& session, const DecoderInterface& decoder, int prompt, int steps,
                            const std::string& saveLogits, bool useBinding) {
  Generation g;
  g.ioBinding = useBinding;
  for (int i = 0; i < prompt; ++i) g.promptIds.push_back((7 * int64_t(i) + 3) % decoder.vocab);
  std::map<std::string, size_t> outputIndex;
  for (size_t k = 0; k < session.outputs().size(); ++k) outputIndex[session.outputs()[k].name] = k;
  IoBinding binding;
  binding.bindOutput("logits", OutputPlace::HOST);
  for (const auto& cache : decoder.caches) binding.bindOutput(cache.present, OutputPlace::DEVICE);
  std::vector<NamedTensor> outputs;
  int64_t cached = 0;
  for (int step = 0; step <= steps; ++step) {
    const TransferCounters before = session.transfers();
    const auto start = Clock::now();
    const std::vector<int64_t> tokens = step == 0 ? g.promptIds : std::vector<int64_t>{g.generatedIds.back()};
    std::vector<NamedTensor> feeds = tokenFeeds(decoder, tokens, cached);
    Status ran = Status::ok();
    if (useBinding) {
      ran = bindingStep(session, binding, decoder, feeds, step == 0);
    } else {
      for (const auto& cache : decoder.caches) {
        feeds.push_back({cache.past, step == 0 ? Tensor(cache.dtype, {1, cache.kvHeads, 0, cache.head})
                                               : std::move(outputs[outputIndex.at(cache.present)].tensor)});
      }
      auto result = session.run(feeds);
      if (result.isOk()) outputs = std::move(result).value();
      ran = result.status();
    }
    if (!ran.isOk()) {
      return Status(ran.code(), (step == 0 ? std::string("prefill") : "decode step " + std::to_string(step)) +
                                    " failed: " + ran.message());
    }
    const Tensor& logits = useBinding ? binding.outputs().front().tensor : outputs[outputIndex.at("logits")].tensor;
    g.generatedIds.push_back(argmaxLastRow(logits, decoder.vocab));
    const double ms = msSince(start);
    const TransferCounters after = session.transfers();
    if (step == 0) {
      g.prefillMs = ms;
      g.residentAfterPrefillKib = app::residentKib();
    } else {
      g.stepMs.push_back(ms);
      g.stepHostToDevice.push_back(after.hostToDeviceBytes - before.hostToDeviceBytes);
      g.stepDeviceToHost.push_back(after.deviceToHostBytes - before.deviceToHostBytes);
    }
    if (step == 1) {  // what crossed the session boundary in host memory
      for (const auto& f : useBinding ? binding.inputs() : feeds) {
        if (!f.tensor.isOnDevice()) g.inputBytes += int64_t(f.tensor.byteSize());
      }
      for (const auto& o : useBinding ? binding.outputs() : outputs) {
        if (!o.tensor.isOnDevice()) g.outputBytes += int64_t(o.tensor.byteSize());
      }
    }
    if (!saveLogits.empty()) {  // after the timing: the file write is not part of the step
      KILN_RETURN_IF_ERROR(writeNpyFile((fs::path(saveLogits) / ("logits_" + std::to_string(step) + ".npy")).string(),
                                        logits));
    }
    cached += static_cast<int64_t>(tokens.size());
  }
  g.residentEndKib = app::residentKib();
  return g;
}

// Partitions per execution provider: {"CPUExecutionProvider": {"partitions": 1, "nodes": 40}, ...}.
nlohmann::json partitionCounts(const Session& session) {
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& p : session.partitions()) {
    auto& entry = counts[p.executionProvider];
    if (entry.is_null()) entry = {{"partitions", 0}, {"nodes", int64_t(0)}};
    entry["partitions"] = entry["partitions"].get<int>() + 1;
    entry["nodes"] = entry["nodes"].get<int64_t>() + p.nodeCount;
  }
  return counts;
}

Result<Generation> runKiln(const DecodeBenchArgs& args) {
  SessionOptions options;
  KILN_RETURN_IF_ERROR(applyExecutionProviders(args.ep, options));
  std::vector<std::string> configs = args.configs;
  if (!args.device.empty()) configs.push_back("kiln.vulkan.device=" + args.device);
  KILN_RETURN_IF_ERROR(applyConfigEntries(configs, options));
  const auto start = Clock::now();
  auto session = Session::create(args.model, options);
  const double createMs = msSince(start);
  if (!session.isOk()) return session.status();
  KILN_ASSIGN_OR_RETURN(DecoderInterface decoder, describeDecoder(**session, args.model));
  const bool binding = !args.noIoBinding;
  KILN_RETURN_IF_ERROR(generate(**session, decoder, args.prompt, 1, "", binding).status());  // discarded warm-up
  KILN_ASSIGN_OR_RETURN(Generation g, generate(**session, decoder, args.prompt, args.steps, args.saveLogits, binding));
  g.runtime = std::string("kiln ") + kiln::engineVersion() + " (" + args.ep + ")";
  g.sessionCreateMs = createMs;
  g.partitions = partitionCounts(**session);
  g.vocab = decoder.vocab;
  return g;
}

Result<Generation> runOnnxRuntime(const DecodeBenchArgs& args) {
  KILN_ASSIGN_OR_RETURN(app::OnnxRuntimeNode runtime,
                        app::findOnnxRuntimeNode(args.onnxRuntimeDir, "bench/ort_decode.mjs"));
  app::ChildSpec spec;
  spec.argv = {runtime.node, runtime.script, runtime.ortDir, args.model, "--decode", std::to_string(args.steps),
               "--prompt", std::to_string(args.prompt), "--threads", "2"};
  if (!args.saveLogits.empty()) {
    spec.argv.insert(spec.argv.end(), {"--save-logits", (fs::path(args.saveLogits) / "onnxruntime").string()});
  }
  spec.timeoutSeconds = args.timeoutSeconds;
  KILN_ASSIGN_OR_RETURN(app::ChildResult child, app::runChild(spec));
  if (!child.exited() || child.exitCode != 0) {
    return Status(StatusCode::FAIL, "onnxruntime-node decode (" + child.describeEnd(args.timeoutSeconds) + "): " + child.err);
  }
  const auto out = nlohmann::json::parse(child.out, nullptr, false);
  if (out.is_discarded()) return Status(StatusCode::FAIL, "ort_decode.mjs printed no JSON: " + child.out);
  Generation g;
  g.runtime = out.value("runtime", std::string("onnxruntime-node"));
  g.promptIds = out.value("prompt_ids", std::vector<int64_t>{});
  g.generatedIds = out.value("generated_ids", std::vector<int64_t>{});
  g.sessionCreateMs = out.value("session_create_ms", 0.0);
  g.prefillMs = out.value("time_to_first_token_ms", 0.0);
  g.stepMs = out.value("step_ms", nlohmann::json::object()).value("samples", std::vector<double>{});
  const auto bytes = out.value("bytes_per_step", nlohmann::json::object());
  g.inputBytes = bytes.value("input", int64_t(0));
  g.outputBytes = bytes.value("output", int64_t(0));
  g.bytesWhere = bytes.value("where", std::string());
  const auto memory = out.value("memory_kib", nlohmann::json::object());
  if (memory.value("after_prefill", nlohmann::json()).is_number()) g.residentAfterPrefillKib = memory["after_prefill"];
  if (memory.value("end", nlohmann::json()).is_number()) g.residentEndKib = memory["end"];
  return g;
}

nlohmann::json orNull(const std::optional<int64_t>& kib) { return kib ? nlohmann::json(*kib) : nlohmann::json(); }

double tokensPerSecond(double tokens, double ms) { return ms > 0 ? tokens * 1000.0 / ms : 0; }

nlohmann::json generationJson(const Generation& g) {
  const app::SampleStatistics steps = app::describeSamples(g.stepMs);
  const double decodeMs = std::accumulate(g.stepMs.begin(), g.stepMs.end(), 0.0);
  nlohmann::json out = {
      {"runtime", g.runtime},
      {"session_create_ms", g.sessionCreateMs},
      {"time_to_first_token_ms", g.prefillMs},
      {"step_ms", app::statisticsJson(steps, &g.stepMs)},
      {"decode_ms", decodeMs},
      {"decode_tokens_per_s",
       {{"median", tokensPerSecond(1, steps.median)}, {"overall", tokensPerSecond(double(g.stepMs.size()), decodeMs)}}},
      {"bytes_per_step", {{"input", g.inputBytes}, {"output", g.outputBytes}, {"where", g.bytesWhere}}},
      {"memory_kib", {{"after_prefill", orNull(g.residentAfterPrefillKib)}, {"end", orNull(g.residentEndKib)}}},
      {"prompt_ids", g.promptIds},
      {"generated_ids", g.generatedIds}};
  if (!g.partitions.is_null()) {  // Kiln's column
    out["partitions"] = g.partitions;
    out["io_binding"] = g.ioBinding;
    out["vocab"] = g.vocab;
    auto perStep = [](const std::vector<uint64_t>& bytes) {
      return nlohmann::json{{"first", bytes.empty() ? 0 : bytes.front()},
                            {"max", bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end())},
                            {"samples", bytes}};
    };
    out["transfers_per_step"] = {{"host_to_device", perStep(g.stepHostToDevice)},
                                 {"device_to_host", perStep(g.stepDeviceToHost)},
                                 {"where", "bytes the session copied between host and device memory (Session::transfers)"}};
  }
  return out;
}

std::string fixed(double value, int digits = 2) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string joinIds(const std::vector<int64_t>& ids) {
  std::string text;
  for (const int64_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

// The side-by-side table: one column per runtime.
std::string toTable(const DecodeBenchArgs& args, const std::vector<nlohmann::json>& columns, const nlohmann::json& same) {
  std::ostringstream out;
  out << "decode bench: " << args.model << ", prompt " << args.prompt << " tokens, " << args.steps << " decode steps\n";
  auto row = [&](const std::string& label, auto cell) {
    char head[40];
    std::snprintf(head, sizeof head, "%-28s", label.c_str());
    out << head;
    for (const auto& c : columns) {
      char text[40];
      std::snprintf(text, sizeof text, "%24s", cell(c).c_str());
      out << text;
    }
    out << "\n";
  };
  row("", [](const nlohmann::json& c) { return c.value("runtime", std::string()); });
  row("session create ms", [](const nlohmann::json& c) { return fixed(c.value("session_create_ms", 0.0)); });
  row("time to first token ms", [](const nlohmann::json& c) { return fixed(c.value("time_to_first_token_ms", 0.0)); });
  for (const char* stat : {"median", "min", "p90", "max"}) {
    row(std::string("step ms ") + stat, [stat](const nlohmann::json& c) {
      const auto& v = c["step_ms"][stat];
      return v.is_number() ? fixed(v.get<double>(), 3) : std::string("-");
    });
  }
  row("decode tokens/s (median)",
      [](const nlohmann::json& c) { return fixed(c["decode_tokens_per_s"].value("median", 0.0), 1); });
  row("decode tokens/s (overall)",
      [](const nlohmann::json& c) { return fixed(c["decode_tokens_per_s"].value("overall", 0.0), 1); });
  row("bytes in / out per step", [](const nlohmann::json& c) {
    return std::to_string(c["bytes_per_step"].value("input", 0)) + " / " +
           std::to_string(c["bytes_per_step"].value("output", 0));
  });
  row("host<->device bytes/step max", [](const nlohmann::json& c) {
    if (!c.contains("transfers_per_step")) return std::string("-");
    const auto& t = c["transfers_per_step"];
    return std::to_string(t["host_to_device"].value("max", uint64_t(0))) + " / " +
           std::to_string(t["device_to_host"].value("max", uint64_t(0)));
  });
  row("resident KiB prefill -> end", [](const nlohmann::json& c) {
    const auto& m = c["memory_kib"];
    auto text = [](const nlohmann::json& v) { return v.is_number() ? std::to_string(v.get<int64_t>()) : std::string("?"); };
    return text(m["after_prefill"]) + " -> " + text(m["end"]);
  });
  out << "bytes in / out: " << kBytesWhere << "\nhost<->device: bytes Kiln copied to / from device memory in a decode "
      << "step (largest step)" << (columns.front().value("io_binding", false) ? ", present.* bound to the device"
                                                                               : ", without IoBinding") << "\n";
  for (const auto& c : columns) {
    out << c.value("runtime", std::string()) << " tokens: " << joinIds(c.value("generated_ids", std::vector<int64_t>{}))
        << "\n";
    if (c.contains("partitions")) {
      for (const auto& [ep, counts] : c["partitions"].items()) {
        out << "  partitions on " << ep << ": " << counts.value("partitions", 0) << " (" << counts.value("nodes", 0)
            << " nodes)\n";
      }
    }
  }
  if (!same.is_null()) out << "token sequences identical: " << (same.get<bool>() ? "yes" : "NO") << "\n";
  return out.str();
}

}  // namespace

int runDecodeBench(const DecodeBenchArgs& args) {
  auto usage = [&](const std::string& message) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, message), args.flags);
  };
  if (args.steps < 1) return usage("--decode takes the number of decode steps after the prefill, at least 1");
  if (args.prompt < 1) return usage("--prompt takes the number of prompt tokens, at least 1");
  if (!fs::is_regular_file(args.model)) {
    return reportError(Status(StatusCode::NO_SUCHFILE, "no model file at '" + args.model + "'"), args.flags);
  }
  std::error_code error;
  if (!args.saveLogits.empty() && !fs::create_directories(args.saveLogits, error) && error) {
    return usage("--save-logits '" + args.saveLogits + "' cannot be created: " + error.message());
  }
  auto kiln = runKiln(args);
  if (!kiln.isOk()) return reportError(kiln.status(), args.flags);
  std::vector<nlohmann::json> columns = {generationJson(*kiln)};
  nlohmann::json report = {{"model", args.model},
                           {"execution_providers", args.ep},
                           {"prompt_tokens", args.prompt},
                           {"decode_steps", args.steps},
                           {"prompt_ids_rule", "(7*i + 3) % vocab"},
                           {"warmup", "one discarded generation (prefill + 1 step) per runtime"},
                           {"kiln", columns.front()}};
  nlohmann::json same = nullptr;
  if (args.compareOnnxRuntime) {
    auto ort = runOnnxRuntime(args);
    if (!ort.isOk() && ort.status().code() == StatusCode::NO_SUCHFILE) {
      if (!args.flags.quiet) {
        std::fprintf(stderr, "kiln: warning: --compare-onnxruntime skipped: %s\n", ort.status().message().c_str());
      }
    } else if (!ort.isOk()) {
      return reportError(ort.status(), args.flags);
    } else {
      columns.push_back(generationJson(*ort));
      same = kiln->generatedIds == ort->generatedIds;
      report["onnxruntime"] = columns.back();
      report["tokens_identical"] = same;
    }
  }
  if (args.flags.json) {
    printJson(report);
  } else {
    std::fputs(toTable(args, columns, same).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace kiln::cli
