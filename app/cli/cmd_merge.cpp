// kiln merge A_ctx.onnx B_ctx.onnx ... -o OUT_ctx.onnx --prefix a_ --prefix b_ [--connect a_out=b_in]: one ctx model
// holding every input's EPContext nodes with per-input name prefixes, and one combined binary with deduplicated
// weights. The inputs are never modified. With --dry-run: the engine's merge plan (names after prefixing, every
// node and initializer, connections, conflicts), and nothing is written.
#include <cstdio>

#include "binary_output.h"
#include "cli_output.h"
#include "commands.h"
#include "kiln/epcontext.h"

namespace kiln::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> models;
  std::string output;
  std::vector<std::string> prefixes;
  std::vector<std::string> connections;
  bool dryRun = false;
  CommonFlags flags;
};

nlohmann::json planToJson(const MergePlan& plan) {
  auto values = [](const std::vector<MergePlanValue>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : list) out.push_back({{"name", v.value.name}, {"type", describeValue(v.value)}, {"input", v.input}});
    return out;
  };
  auto names = [](const std::vector<MergePlanName>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& n : list) out.push_back({{"name", n.name}, {"input", n.input}});
    return out;
  };
  nlohmann::json nodes = nlohmann::json::array(), connections = nlohmann::json::array();
  for (const auto& n : plan.nodes) {
    nodes.push_back({{"name", n.name}, {"op_type", n.opType}, {"epcontext", n.epContext}, {"partition", n.partition},
                     {"inputs", n.inputs}, {"outputs", n.outputs}, {"input", n.input}});
  }
  for (const auto& c : plan.connections) connections.push_back({{"from", c.from}, {"to", c.to}, {"problem", c.problem}});
  return {{"ok", plan.ok()},          {"inputs", values(plan.inputs)},   {"outputs", values(plan.outputs)},
          {"nodes", nodes},           {"initializers", names(plan.initializers)}, {"graphs", names(plan.graphs)},
          {"connections", connections}, {"conflicts", plan.conflicts},   {"problems", plan.problems}};
}

void printPlan(const MergePlan& plan) {
  for (const auto& v : plan.inputs) std::printf("input %s: %s (input %d)\n", v.value.name.c_str(), describeValue(v.value).c_str(), v.input + 1);
  for (const auto& v : plan.outputs) std::printf("output %s: %s (input %d)\n", v.value.name.c_str(), describeValue(v.value).c_str(), v.input + 1);
  for (const auto& n : plan.nodes) {
    std::printf("node %s (%s)%s%s (input %d)\n", n.name.c_str(), n.opType.c_str(), n.partition.empty() ? "" : " graph ",
                n.partition.c_str(), n.input + 1);
  }
  for (const auto& i : plan.initializers) std::printf("initializer %s (input %d)\n", i.name.c_str(), i.input + 1);
  for (const auto& c : plan.connections) {
    std::printf("connection %s -> %s: %s\n", c.from.c_str(), c.to.c_str(), c.problem.empty() ? "ok" : c.problem.c_str());
  }
  for (const auto& c : plan.conflicts) std::printf("conflict: %s\n", c.c_str());
  for (const auto& p : plan.problems) std::printf("problem: %s\n", p.c_str());
}

// --dry-run: prints the plan; exit 2 (usage) when the merge would be refused.
int runDryRun(const std::vector<MergeInput>& inputs, const std::vector<std::pair<std::string, std::string>>& connections,
              const CommonFlags& flags) {
  auto plan = planMerge(inputs, connections);
  if (!plan.isOk()) return reportError(plan.status(), flags);
  if (flags.json) {
    printJson(planToJson(*plan));
  } else if (!flags.quiet) {
    printPlan(*plan);
  }
  if (plan->ok()) return kExitOk;
  std::fprintf(stderr, "kiln: error: %s\n", plan->status().toString().c_str());
  return kExitUsage;
}

int runMerge(const MergeArgs& args) {
  configureLogging(args.flags);
  if (!args.prefixes.empty() && args.prefixes.size() != args.models.size()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "give one --prefix per input model (" +
                                                                std::to_string(args.models.size()) + " models, " +
                                                                std::to_string(args.prefixes.size()) + " prefixes)"),
                       args.flags);
  }
  std::vector<MergeInput> inputs;
  for (size_t i = 0; i < args.models.size(); ++i) inputs.push_back({args.models[i], args.prefixes.empty() ? "" : args.prefixes[i]});
  std::vector<std::pair<std::string, std::string>> connections;
  for (const auto& text : args.connections) {
    auto kv = splitAssignment(text, "--connect");
    if (!kv.isOk()) return reportError(kv.status(), args.flags);
    connections.push_back(*kv);
  }
  if (args.dryRun) return runDryRun(inputs, connections, args.flags);
  auto merged = mergeEpContextModels(inputs, args.output, connections);
  if (!merged.isOk()) return reportError(merged.status(), args.flags);
  if (args.flags.json) {
    printJson({{"output_model", merged->outputModelPath},
               {"binary_path", merged->binaryPath},
               {"epcontext_nodes", merged->epContextNodes},
               {"binary", toJson(merged->binary)}});
  } else if (!args.flags.quiet) {
    std::printf("wrote %s (%d EPContext nodes) and %s (%llu bytes; weights %llu bytes stored for %llu referenced)\n",
                merged->outputModelPath.c_str(), merged->epContextNodes, merged->binaryPath.c_str(),
                static_cast<unsigned long long>(merged->binary.fileSize),
                static_cast<unsigned long long>(merged->binary.weightBytes),
                static_cast<unsigned long long>(merged->binary.weightBytesReferenced));
  }
  return kExitOk;
}

}  // namespace

void registerMerge(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge the EPContext nodes of several ctx models into one model and binary");
  cmd->add_option("models", args->models, "EPContext models (<stem>_ctx.onnx), two or more")->required()->expected(2, -1);
  cmd->add_option("-o,--output", args->output, "Merged ctx model to write; its binary is <OUT stem>_vulkan.bin")->required();
  cmd->add_option("--prefix", args->prefixes, "Name prefix per input model, in order (node, value, partition, graph names)");
  cmd->add_option("--connect", args->connections, "FROM=TO: feed output FROM to input TO (prefixed names; repeatable)");
  cmd->add_flag("--dry-run", args->dryRun, "Print the merge plan (names, conflicts, connections) and write nothing");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln merge det_ctx.onnx rec_ctx.onnx -o ocr_ctx.onnx --prefix det_ --prefix rec_\n"
              "  kiln merge a_ctx.onnx b_ctx.onnx -o ab_ctx.onnx --prefix a_ --prefix b_ --connect a_out=b_in\n"
              "  kiln merge a_ctx.onnx b_ctx.onnx -o ab_ctx.onnx --prefix a_ --prefix b_ --dry-run --json");
  cmd->callback([args, &commands] { commands.run = [args] { return runMerge(*args); }; });
}

}  // namespace kiln::cli
