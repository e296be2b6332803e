// kiln/context_binary.h's inspectContextBinary: the format describes what it knows, and the EP that compiled each
// partition (found among the EPs this build can create) describes what it stored in its own format.
#include "context_binary/context_binary.h"
#include "kiln/context_binary.h"
#include "session/execution_providers.h"

namespace kiln {
namespace {

Result<ContextBinaryInfo> describe(const ctxbin::ContextBinary& binary, const std::string& origin) {
  const ctxbin::ContextHooksLookup providers = allContextHooks();
  return ctxbin::describeContextBinary(binary, origin, [&](const CompiledPartition& partition) {
    const ctxbin::EpContextHooks* hooks = providers(partition.executionProvider);
    return hooks ? hooks->describePartition(partition) : std::vector<std::pair<std::string, std::string>>{};
  });
}

}  // namespace

Result<ContextBinaryInfo> inspectContextBinary(std::span<const std::byte> bytes, const std::string& origin) {
  KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
  return describe(*binary, origin);
}

Result<ContextBinaryInfo> inspectContextBinary(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::open(path));
  return describe(*binary, path);
}

}  // namespace kiln
