// Which weights a compile leaves in their external-data file (onnx_io::LoadOptions::deferLargeExternalData)
// and when it must read them after all: a compile streams the weights that pass into the context binary
// untransformed from their file ranges, so a model with more weights than memory compiles with one chunk
// resident.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "kiln/compiler.h"
#include "kiln/session_options.h"
#include "kiln/status.h"

namespace kiln {

// True when a compile with `options` may defer large external initializers: no compile step transforms them
// wholesale (kiln.vulkan.fp16 converts every float weight, so it reads them all), none runs the partitions
// (kiln.vulkan.autotune times them on the device at compile) and the binary stores weights (a weightless
// binary matches weights by their bytes in memory).
bool compileMayDeferWeights(const SessionOptions& options);

// Reads the deferred initializers of the freshly loaded `graph` (main graph) that some step may read at
// compile time: all but float weights only ever read by elementwise arithmetic (Add, Sub, Mul, Div) with an
// input computed at run time, whose kernels take a weight as it is (constant folding, fusions and kernels
// that absorb or prepack weights read other ops' weights, or scalars; graph inputs may override an
// initializer, so those are read too).
Status loadDeferredWeightsReadAtCompile(ir::Graph& graph,
                                        const std::map<std::string, ExternalInitializerInfo>& ranges);

// After partitioning: reads the deferred initializers of `graph` (main graph) that anything but a compiled
// partition reads (a CPU node, a graph output) or that nothing reads, so the CPU executor and the ctx model
// hold their bytes.
Status loadDeferredWeightsOutsidePartitions(ir::Graph& graph,
                                            const std::map<std::string, ExternalInitializerInfo>& ranges);

}  // namespace kiln
