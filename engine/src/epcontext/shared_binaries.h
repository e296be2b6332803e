// Context binaries shared across sessions (ep.share_ep_contexts=1 at inference): the first session of a group
// maps and decodes a binary; later sessions that name the same file take the same graphs and weights. Entries live
// as long as some session holds them, so sessions may be released in any order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"

namespace kiln::epctx {

struct LoadedBinary {
  std::shared_ptr<const ctxbin::ContextBinary> binary;
  std::vector<CompiledPartition> partitions;  // decoded once; their graphs and weights are shared
};

// The binary at `canonicalPath`, from the process-wide registry when `share` and another session holds it, else
// opened and decoded by `decode` (and registered when `share`). `opened` tells whether this call read the file.
using PartitionDecoder = std::function<Result<std::vector<CompiledPartition>>(const ctxbin::ContextBinary&)>;
Result<std::shared_ptr<const LoadedBinary>> loadBinaryFile(const std::string& canonicalPath, bool share, bool* opened,
                                                           const PartitionDecoder& decode);

}  // namespace kiln::epctx
