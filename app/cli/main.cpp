// kiln: Kiln's scripted batch mode. Each subcommand lives in cmd_<name>.cpp and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "cli_output.h"
#include "commands.h"
#include "kiln/version.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: compile and run ONNX models (CPU and Vulkan execution providers)", "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + kiln::engineVersion());
  app.require_subcommand(1);
  kiln::cli::Commands commands;
  kiln::cli::registerRun(app, commands);
  kiln::cli::registerConformance(app, commands);
  kiln::cli::registerPartition(app, commands);
  kiln::cli::registerDevices(app, commands);
  kiln::cli::registerCompile(app, commands);
  kiln::cli::registerInspect(app, commands);
  kiln::cli::registerCheck(app, commands);
  kiln::cli::registerMerge(app, commands);
  kiln::cli::registerPackage(app, commands);
  kiln::cli::registerBench(app, commands);
  kiln::cli::registerBatch(app, commands);
  kiln::cli::registerCompare(app, commands);
  kiln::cli::registerDiff(app, commands);
  kiln::cli::registerHelpDocs(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // --help and --version are successes; every real parse error is a usage error (exit 2).
    return code == 0 ? 0 : kiln::cli::kExitUsage;
  }
  // The engine API never throws; the CLI's own code (JSON, files, strings) might. No exception ever reaches
  // std::terminate: it is reported like any other failure, as the last line of stderr.
  try {
    return commands.run ? commands.run() : kiln::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    std::fputs("kiln: error: RUNTIME_EXCEPTION: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: error: RUNTIME_EXCEPTION: %s\n", e.what());
  } catch (...) {
    std::fputs("kiln: error: RUNTIME_EXCEPTION: unknown exception\n", stderr);
  }
  return kiln::cli::kExitFailure;
}
