// kiln/compiler.h: a session compiles the partitions; its compiled model is written as a context binary.
#include <filesystem>

#include "context_binary/context_binary.h"
#include "kiln/compiler.h"
#include "kiln/session.h"
#include "session/compiled_model_io.h"
#include "session/inference_session.h"

namespace kiln {

std::string defaultContextBinaryPath(const std::string& modelPath) {
  const std::filesystem::path model(modelPath);
  return (model.parent_path() / (model.stem().string() + "_vulkan.bin")).string();
}

Result<CompiledBinary> compileContextBinary(const std::string& modelPath, const std::string& binaryPath,
                                            const SessionOptions& options) {
  CompiledBinary out;
  out.path = binaryPath.empty() ? defaultContextBinaryPath(modelPath) : binaryPath;
  std::error_code ec;
  const std::filesystem::path target(out.path);
  if (out.path.back() == '/' || std::filesystem::is_directory(target, ec) || !target.has_extension()) {
    return Status(StatusCode::INVALID_ARGUMENT, "output path '" + out.path + "' names a folder; give a file name such as model_vulkan.bin");
  }
  SessionOptions compileOptions = options;
  if (!options.configEntry("kiln.execution_providers")) {
    KILN_RETURN_IF_ERROR(compileOptions.addConfigEntry("kiln.execution_providers", "vulkan,cpu"));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(modelPath, compileOptions));
  out.timings = session->timings();
  out.counters = session->counters();
  KILN_ASSIGN_OR_RETURN(CompiledModel compiled, compiledModelOf(*session));
  if (compiled.partitions.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "no node of " + modelPath + " runs on the Vulkan EP: nothing to compile");
  }
  KILN_ASSIGN_OR_RETURN(ctxbin::BinaryContents contents, binaryContentsFor(std::move(compiled.partitions)));
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) return Status(StatusCode::FAIL, "cannot create folder " + target.parent_path().string() + ": " + ec.message());
  }
  KILN_RETURN_IF_ERROR(ctxbin::writeContextBinary(contents, out.path));
  KILN_ASSIGN_OR_RETURN(out.info, inspectContextBinary(out.path));
  return out;
}

}  // namespace kiln
