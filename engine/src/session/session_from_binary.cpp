#include "session/session_from_binary.h"

#include "epcontext/binary_admission.h"
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
  KILN_ASSIGN_OR_RETURN(compiled.partitions, opened.first->partitions());
  compiled.origins.assign(compiled.partitions.size(), StoredPartitionOrigin{"", binaryPath});
  timings.binary_read_ms += readClock.elapsedMs();
  return createSessionFromCompiledModel(std::move(compiled), options, timings, &started);
}

}  // namespace kiln
