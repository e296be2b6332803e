// kiln inspect FILE: everything a context binary holds (header, section table, graphs, SPIR-V, weights and their
// deduplication) and its verdict against the current device (or a device profile); for a pipeline cache file, its
// recorded environment, entries and whether the current device would use it.
#include <algorithm>
#include <cstdio>
#include <map>

#include "binary_output.h"
#include "cli_output.h"
#include "commands.h"
#include "kiln/epcontext.h"
#include "kiln/model_package.h"
#include "kiln/pipeline_cache.h"
#include "package_output.h"

namespace kiln::cli {
namespace {

struct InspectArgs {
  std::string file;
  std::string device;
  std::string profile;
  CommonFlags flags;
};

Result<CompatibilityVerdict> verdictFor(const std::string& file, const std::string& device, const std::string& profile) {
  return profile.empty() ? checkContextBinary(file, device) : checkContextBinaryAgainstProfile(file, profile);
}

nlohmann::json pipelineCacheJson(const PipelineCacheFileInfo& info) {
  return {{"path", info.path},
          {"kind", "pipeline_cache"},
          {"file_size", info.fileSize},
          {"format_version", info.formatVersion},
          {"engine_version", info.engineVersion},
          {"device",
           {{"vendor_id", info.vendorId},
            {"device_id", info.deviceId},
            {"driver_id", info.driverId},
            {"driver_version", info.driverVersion},
            {"api_version", info.apiVersion},
            {"pipeline_cache_uuid", info.pipelineCacheUuid}}},
          {"spirv_entries", info.spirvEntries},
          {"spirv_bytes", info.spirvBytes},
          {"driver_blob_bytes", info.driverBlobBytes},
          {"usable", info.usable},
          {"reason", info.reason},
          {"damaged", info.damaged},
          {"driver_blob_reason", info.driverBlobReason},
          {"against", info.against}};
}

int inspectPipelineCache(const InspectArgs& args) {
  auto info = inspectPipelineCacheFile(args.file, args.device);
  if (!info.isOk()) return reportError(info.status(), args.flags);
  // A damaged file is reported in full, then the exit status says so; another device's cache is not damage.
  const int exitCode = info->damaged ? kExitFailure : kExitOk;
  if (args.flags.json) {
    printJson(pipelineCacheJson(*info));
    return exitCode;
  }
  std::printf("%s: Kiln pipeline cache file, format %u, %llu bytes, written by engine %s\n", info->path.c_str(),
              info->formatVersion, static_cast<unsigned long long>(info->fileSize), info->engineVersion.c_str());
  std::printf("  device: vendor 0x%04x device 0x%04x, Vulkan %s, driver id %u version 0x%x, pipeline cache UUID %s\n",
              info->vendorId, info->deviceId, info->apiVersion.c_str(), info->driverId, info->driverVersion,
              info->pipelineCacheUuid.c_str());
  std::printf("  SPIR-V: %u entries, %llu bytes; driver blob: %llu bytes\n", info->spirvEntries,
              static_cast<unsigned long long>(info->spirvBytes), static_cast<unsigned long long>(info->driverBlobBytes));
  if (info->usable) {
    std::printf("used by %s%s%s\n", info->against.c_str(), info->driverBlobReason.empty() ? "" : "; driver blob dropped: ",
                info->driverBlobReason.c_str());
  } else {
    std::printf("a cache miss on %s: %s%s\n", info->against.c_str(), info->damaged ? "damaged: " : "",
                info->reason.c_str());
  }
  return exitCode;
}

nlohmann::json valuesJson(const std::vector<ValueMetadata>& values) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : values) list.push_back({{"name", v.name}, {"dtype", dataTypeName(v.dtype)}});
  return list;
}

nlohmann::json nodeJson(const EpContextNodeInfo& n) {
  return {{"name", n.name},           {"graph", n.graph},
          {"source", n.source},       {"claimed_by_vulkan", n.vulkan},
          {"main_context", n.mainContext}, {"embed_mode", n.embedMode},
          {"ep_cache_context", n.cacheContext}, {"partition_name", n.partitionName},
          {"ep_sdk_version", n.sdkVersion}, {"hardware_architecture", n.hardwareArchitecture},
          {"onnx_model_filename", n.onnxModelFilename}, {"notes", n.notes},
          {"max_size", n.maxSize},    {"inputs", n.inputs},
          {"outputs", n.outputs},     {"binary", n.binary},
          {"problem", n.problem}};
}

// A ctx model: every EPContext node followed to its binary; foreign nodes listed, not refused.
int inspectCtxModel(const InspectArgs& args) {
  auto info = inspectEpContextModel(args.file);
  if (!info.isOk()) return reportError(info.status(), args.flags);
  if (info->nodes.empty()) {
    return reportError(Status(StatusCode::INVALID_GRAPH, args.file + " has no EPContext node: a plain model (kiln "
                                                                     "partition shows how it would run, kiln compile compiles it)"),
                       args.flags);
  }
  // Problems (a missing, corrupt or mismatched binary, an edited input type) are reported in full, then the exit
  // status says so.
  const bool problems = !info->problems.empty() ||
                        std::any_of(info->nodes.begin(), info->nodes.end(), [](const auto& n) { return !n.problem.empty(); });
  const int exitCode = problems ? kExitFailure : kExitOk;
  std::map<std::string, nlohmann::json> verdicts;
  for (const auto& [key, binary] : info->binaries) {
    if (key.rfind("embedded", 0) == 0) continue;  // an embedded payload has no file to judge: load it to see
    auto verdict = verdictFor(key, args.device, args.profile);
    verdicts[key] = verdict.isOk() ? toJson(*verdict) : nlohmann::json{{"error", verdict.status().toString()}};
  }
  if (args.flags.json) {
    nlohmann::json nodes = nlohmann::json::array(), binaries = nlohmann::json::object(), metadata = nlohmann::json::object();
    for (const auto& n : info->nodes) nodes.push_back(nodeJson(n));
    for (const auto& [key, binary] : info->binaries) {
      binaries[key] = toJson(binary);
      if (verdicts.count(key)) binaries[key]["verdict"] = verdicts[key];
    }
    for (const auto& [k, v] : info->metadata) metadata[k] = v;
    printJson({{"path", info->path}, {"kind", "epcontext_model"}, {"inputs", valuesJson(info->inputs)},
               {"outputs", valuesJson(info->outputs)}, {"other_nodes", info->otherNodes}, {"metadata", metadata},
               {"epcontext_nodes", nodes}, {"binaries", binaries}, {"problems", info->problems}});
    return exitCode;
  }
  std::printf("%s: EPContext model, %zu EPContext node(s), %lld other node(s), %zu input(s), %zu output(s)\n",
              info->path.c_str(), info->nodes.size(), static_cast<long long>(info->otherNodes), info->inputs.size(),
              info->outputs.size());
  for (const auto& n : info->nodes) {
    std::printf("  %s [%s] source=%s main_context=%lld embed_mode=%lld partition=%s\n    ep_cache_context: %s\n",
                n.name.c_str(), n.graph.c_str(), n.source.empty() ? "(none)" : n.source.c_str(),
                static_cast<long long>(n.mainContext), static_cast<long long>(n.embedMode), n.partitionName.c_str(),
                n.cacheContext.c_str());
    if (!n.vulkan) std::printf("    foreign: not for the Vulkan EP (not followed)\n");
    if (!n.problem.empty()) std::printf("    problem: %s\n", n.problem.c_str());
  }
  for (const auto& p : info->problems) std::printf("problem: %s\n", p.c_str());
  for (const auto& [key, binary] : info->binaries) {
    std::printf("\n");
    printText(binary);
    if (auto verdict = verdictFor(key, args.device, args.profile); key.rfind("embedded", 0) != 0 && verdict.isOk()) {
      printText(*verdict);
    }
  }
  return exitCode;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A model package: its variants, each judged for this machine, and the one a session would load.
int inspectPackage(const InspectArgs& args) {
  auto package = readModelPackage(args.file);
  if (!package.isOk()) return reportError(package.status(), args.flags);
  SessionOptions options;
  if (!args.device.empty()) {
    if (Status s = options.addConfigEntry("kiln.vulkan.device", args.device); !s.isOk()) return reportError(s, args.flags);
  }
  auto choice = choosePackageVariant(*package, options);
  const PackageChoice* judged = choice.isOk() ? &*choice : nullptr;
  if (args.flags.json) {
    nlohmann::json document = packageJson(*package, judged);
    if (!judged) document["choice"] = {{"error", choice.status().toString()}};
    printJson(document);
    return kExitOk;
  }
  printPackage(*package, judged);
  if (!judged) std::printf("choice: not available (%s)\n", choice.status().toString().c_str());
  return kExitOk;
}

int runInspect(const InspectArgs& args) {
  configureLogging(args.flags);
  if (isModelPackage(args.file)) return inspectPackage(args);
  if (endsWith(args.file, ".onnx")) return inspectCtxModel(args);
  auto kind = kilnFileKind(args.file);
  if (!kind.isOk()) return reportError(kind.status(), args.flags);
  if (*kind == "pipeline_cache") return inspectPipelineCache(args);
  auto info = inspectContextBinary(args.file);
  if (!info.isOk()) return reportError(info.status(), args.flags);
  // No device is not an error for inspection: the verdict says why it is missing.
  auto verdict = verdictFor(args.file, args.device, args.profile);
  if (args.flags.json) {
    nlohmann::json document = toJson(*info);
    document["verdict"] = verdict.isOk() ? toJson(*verdict) : nlohmann::json{{"error", verdict.status().toString()}};
    printJson(document);
    return kExitOk;
  }
  printText(*info);
  if (verdict.isOk()) {
    printText(*verdict);
  } else {
    std::printf("verdict: not available (%s)\n", verdict.status().toString().c_str());
  }
  return kExitOk;
}

}  // namespace

void registerInspect(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Show an EPContext model's nodes and binaries, a context binary's header, sections, graphs, SPIR-V and "
                 "weights, or a pipeline cache file's");
  cmd->add_option("file", args->file, "EPContext model (<stem>_ctx.onnx), context binary (<stem>_vulkan.bin) or pipeline cache file (.vkcache)")->required();
  cmd->add_option("--device", args->device, "Judge against this Vulkan device (index or name substring)");
  cmd->add_option("--profile", args->profile, "Judge against this device profile instead of a live device");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln inspect model_ctx.onnx\n  kiln inspect model_vulkan.bin\n  kiln inspect model_vulkan.bin --json --profile gpu.json\n"
              "  kiln inspect ~/.cache/kiln/<hash>.vkcache");
  cmd->callback([args, &commands] { commands.run = [args] { return runInspect(*args); }; });
}

}  // namespace kiln::cli
