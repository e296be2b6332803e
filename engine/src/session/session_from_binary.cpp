#include "session/session_from_binary.h"

#include <filesystem>

#include "epcontext/binary_admission.h"
#include "epcontext/weightless.h"
#include "session/inference_session.h"
#include "session/session_config.h"
#include "util/stopwatch.h"

namespace kiln {

Result<std::unique_ptr<Session>> createSessionFromBinary(ir::Model model, const std::string& binaryPath,
                                                         const SessionOptions& options) {
  const Stopwatch started;
  KILN_ASSIGN_OR_RETURN(const SessionConfig config, parseSessionConfig(options));
  SessionTimings timings;
  CompiledModel compiled;
  KILN_ASSIGN_OR_RETURN(auto opened, openCompiledBinary(binaryPath, admissionPolicy(config), timings, compiled.resources));
  Stopwatch readClock;
  compiled.model = std::move(model);
  // A weightless binary's source path is recorded relative to its ctx model, which sits beside it.
  const std::string folder = std::filesystem::path(binaryPath).parent_path().string();
  KILN_ASSIGN_OR_RETURN(compiled.partitions,
                        epctx::decodePartitions(*opened.first, true, folder.empty() ? "." : folder,
                                                config.epContext.sourceModelPath, &timings));
  compiled.origins.assign(compiled.partitions.size(), StoredPartitionOrigin{"", binaryPath});
  timings.binary_read_ms += readClock.elapsedMs();
  return createSessionFromCompiledModel(std::move(compiled), options, config, timings, &started);
}

}  // namespace kiln
