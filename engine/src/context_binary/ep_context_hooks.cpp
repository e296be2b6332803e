#include "context_binary/ep_context_hooks.h"

namespace kiln::ctxbin {

Result<const EpContextHooks*> exporterOf(const std::vector<CompiledPartition>& partitions, const ContextHooksLookup& lookup) {
  if (partitions.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no compiled partitions to store");
  const std::string& provider = partitions.front().executionProvider;
  for (const auto& p : partitions) {
    if (p.executionProvider != provider) {
      return Status(StatusCode::INVALID_ARGUMENT, "one context binary holds one execution provider's partitions: '" +
                                                      partitions.front().name + "' is " + provider + "'s, '" + p.name +
                                                      "' " + p.executionProvider + "'s");
    }
  }
  const EpContextHooks* hooks = lookup ? lookup(provider) : nullptr;
  if (!hooks) {
    return Status(StatusCode::INVALID_ARGUMENT, provider + " stores no context binary (partition '" +
                                                    partitions.front().name + "')");
  }
  return hooks;
}

}  // namespace kiln::ctxbin
