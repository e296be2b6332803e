// An EPContext node's inputs and outputs against what its context binary was compiled for. A ctx model is an
// editable file: a graph input retyped from float32 to int64 (or given another rank or fixed size) would feed the
// compiled kernels bytes they were never built for, and they would run and print garbage. Loading and `kiln check`
// both refuse such a node with the reason this returns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::epctx {

// What the binary recorded for one partition: its input and output names in the EPContext node's order, and the
// value types it was compiled for (ValueMetadata by name; a value with no recorded type is not checked).
struct RecordedIo {
  const std::vector<std::string>& inputs;
  const std::vector<std::string>& outputs;
  const std::vector<ValueMetadata>& types;
};

// The first disagreement between `node` (an EPContext node of `graph`: the ctx model's declared or inferred types
// of the values it reads and writes) and `recorded`: a different element type, rank or fixed dimension, or a
// different number of inputs or outputs. nullopt when they agree, or where either side does not say.
std::optional<std::string> ioMismatch(const ir::Graph& graph, const ir::Node& node, const RecordedIo& recorded);

// A digest (16 hex digits) of the declared types of the graph inputs and outputs that `model`'s Vulkan EPContext
// nodes read and write, in every graph. The writer stores it (kIoDigestKey); `kiln check` answers from the model's
// metadata alone only while the model still has it, so an edited graph input sends it to the binaries.
std::string declaredIoDigest(const ir::Model& model);

}  // namespace kiln::epctx
