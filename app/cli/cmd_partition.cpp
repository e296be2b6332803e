// kiln partition MODEL: how the model's nodes are assigned to execution providers (the engine's partition report),
// without compiling or running anything. For a ctx model: its EPContext partitions (each with a "binary" key: the
// context binary's path as the node names it, or "embedded") and the CPU-fallback nodes, bodies included.
#include <cstdio>

#include "cli_output.h"
#include "commands.h"
#include "kiln/partition_report.h"

namespace kiln::cli {
namespace {

struct PartitionArgs {
  std::string model;
  std::string ep;  // "vulkan,cpu", "cpu": kiln.execution_providers
  std::vector<std::string> configs;
  CommonFlags flags;
};

Status configure(const PartitionArgs& args, SessionOptions& options) {
  KILN_RETURN_IF_ERROR(applyExecutionProviders(args.ep, options));
  KILN_RETURN_IF_ERROR(applyConfigEntries(args.configs, options));
  return Status::ok();
}

nlohmann::json toJson(const std::string& model, const PartitionReport& report) {
  nlohmann::json graphs = nlohmann::json::array();
  for (const auto& graph : report.graphs) {
    nlohmann::json partitions = nlohmann::json::array(), nodes = nlohmann::json::array(),
                   folded = nlohmann::json::array();
    for (const auto& p : graph.partitions) {
      nlohmann::json partition = {{"name", p.name}, {"execution_provider", p.executionProvider},
                                  {"compiled", p.compiled}, {"nodes", p.nodes}, {"inputs", p.inputs},
                                  {"outputs", p.outputs}};
      // Only partitions loaded from an EPContext node (a ctx model) have a binary: its path or "embedded".
      if (!p.binary.empty()) partition["binary"] = p.binary;
      // Only partitions the cost model weighed (an EP that pays for transfers) have a reason: why they were offloaded.
      if (!p.reason.empty()) partition["reason"] = p.reason;
      partitions.push_back(std::move(partition));
    }
    for (const auto& n : graph.nodes) {
      nodes.push_back({{"node", n.node}, {"op_type", n.opType}, {"execution_provider", n.executionProvider},
                       {"rejections", n.rejections}});
    }
    for (const auto& c : graph.foldedConstants) folded.push_back({{"node", c.node}, {"output", c.output}});
    graphs.push_back(
        {{"path", graph.path}, {"partitions", partitions}, {"nodes", nodes}, {"folded_constants", folded}});
  }
  return {{"model", model},
          {"execution_providers", report.executionProviders},
          {"optimization_level", report.optimizationLevel},
          {"summary",
           {{"nodes_per_execution_provider", nodesPerExecutionProvider(report)},
            {"partitions", partitionCount(report)},
            {"compiled_partitions", compiledPartitionCount(report)},
            {"folded_constants", foldedConstantCount(report)},
            {"nodes_folded", report.nodesFolded},
            {"nodes_removed", report.nodesRemoved}}},
          {"graphs", graphs}};
}

// "1 partition", "3 partitions".
std::string counted(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "-" : text;
}

void printText(const std::string& model, const PartitionReport& report) {
  const auto perEp = nodesPerExecutionProvider(report);
  int64_t total = 0;
  std::string counts;
  for (const auto& ep : report.executionProviders) {
    auto it = perEp.find(ep);
    if (it == perEp.end()) continue;
    total += it->second;
    counts += (counts.empty() ? "" : ", ") + std::to_string(it->second) + " on " + ep;
  }
  std::printf("model: %s\n", model.c_str());
  std::printf("%s: %s; %s (%lld compiled); %s\n", counted(total, "node").c_str(),
              counts.empty() ? "none" : counts.c_str(), counted(partitionCount(report), "partition").c_str(),
              static_cast<long long>(compiledPartitionCount(report)),
              counted(foldedConstantCount(report), "folded constant").c_str());
  std::printf("optimization level %s: %s folded, %s removed\n", report.optimizationLevel.c_str(),
              counted(report.nodesFolded, "node").c_str(), counted(report.nodesRemoved, "dead node").c_str());
  for (const auto& graph : report.graphs) {
    for (const auto& p : graph.partitions) {
      std::printf("partition %s on %s (%s): %s\n", p.name.c_str(), p.executionProvider.c_str(), graph.path.c_str(),
                  counted(static_cast<int64_t>(p.nodes.size()), "node").c_str());
      if (!p.binary.empty()) std::printf("  binary: %s\n", p.binary.c_str());
      if (!p.reason.empty()) std::printf("  reason: %s\n", p.reason.c_str());
      std::printf("  inputs: %s\n  outputs: %s\n", joined(p.inputs).c_str(), joined(p.outputs).c_str());
      for (const auto& node : p.nodes) std::printf("  %s\n", node.c_str());
    }
  }
  bool header = false;
  for (const auto& graph : report.graphs) {
    for (const auto& c : graph.foldedConstants) {
      if (!header) std::printf("folded constants:\n");
      header = true;
      std::printf("  %s: %s -> %s\n", graph.path.c_str(), c.node.c_str(), c.output.c_str());
    }
  }
  header = false;
  for (const auto& graph : report.graphs) {
    for (const auto& n : graph.nodes) {
      if (n.rejections.empty()) continue;
      if (!header) std::printf("rejected nodes:\n");
      header = true;
      std::printf("  %s: %s -> %s\n", graph.path.c_str(), n.node.c_str(), n.executionProvider.c_str());
      for (const auto& reason : n.rejections) std::printf("    %s\n", reason.c_str());
    }
  }
}

int runPartition(const PartitionArgs& args) {
  configureLogging(args.flags);
  SessionOptions options;
  Status configured = configure(args, options);
  if (!configured.isOk()) return reportError(configured, args.flags);
  auto report = analyzePartitions(args.model, options);
  if (!report.isOk()) return reportError(report.status(), args.flags);
  if (args.flags.json) {
    printJson(toJson(args.model, *report));
  } else {
    printText(args.model, *report);
  }
  return kExitOk;
}

}  // namespace

void registerPartition(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<PartitionArgs>();
  CLI::App* cmd = app.add_subcommand("partition", "Show how a model's nodes are assigned to execution providers");
  cmd->footer(
      "\nExamples:\n"
      "  kiln partition det.onnx\n"
      "  kiln partition vad.onnx --ep vulkan,cpu --json\n"
      "  kiln partition vad_ctx.onnx --json\n"
      "  kiln partition model.onnx --config kiln.graph_optimization_level=none");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--ep", args->ep,
                  "Execution providers in preference order, e.g. vulkan,cpu (default: the session's)");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry (repeatable)");
  addCommonFlags(*cmd, args->flags);
  cmd->callback([&commands, args] { commands.run = [args] { return runPartition(*args); }; });
}

}  // namespace kiln::cli
