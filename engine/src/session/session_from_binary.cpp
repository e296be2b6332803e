#include "session/session_from_binary.h"

#include <filesystem>

#include "epcontext/binary_admission.h"
#include "epcontext/weightless.h"
#include "kiln/config_keys.h"
#include "session/inference_session.h"
#include "util/stopwatch.h"

namespace kiln {

Result<std::unique_ptr<Session>> createSessionFromBinary(ir::Model model, const std::string& binaryPath,
                                                         const SessionOptions& options) {
  const Stopwatch started;
  SessionTimings timings;
  CompiledModel compiled;
  KILN_ASSIGN_OR_RETURN(auto opened, openCompiledBinary(binaryPath, options, timings, compiled.resources));
  Stopwatch readClock;
  compiled.model = std::move(model);
  // A weightless binary's source path is recorded relative to its ctx model, which sits beside it.
  const std::string folder = std::filesystem::path(binaryPath).parent_path().string();
  KILN_ASSIGN_OR_RETURN(compiled.partitions,
                        epctx::decodePartitions(*opened.first, true, folder.empty() ? "." : folder,
                                                options.configEntryOr(config::kEpContextSourceModelPath, ""), &timings));
  compiled.origins.assign(compiled.partitions.size(), StoredPartitionOrigin{"", binaryPath});
  timings.binary_read_ms += readClock.elapsedMs();
  return createSessionFromCompiledModel(std::move(compiled), options, timings, &started);
}

}  // namespace kiln
