// kiln merge A_ctx.onnx B_ctx.onnx ... -o OUT_ctx.onnx --prefix a_ --prefix b_ [--connect a_out=b_in]: one ctx model
// holding every input's EPContext nodes with per-input name prefixes, and one combined binary with deduplicated
// weights. The inputs are never modified.
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
  CommonFlags flags;
};

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
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln merge det_ctx.onnx rec_ctx.onnx -o ocr_ctx.onnx --prefix det_ --prefix rec_\n"
              "  kiln merge a_ctx.onnx b_ctx.onnx -o ab_ctx.onnx --prefix a_ --prefix b_ --connect a_out=b_in");
  cmd->callback([args, &commands] { commands.run = [args] { return runMerge(*args); }; });
}

}  // namespace kiln::cli
