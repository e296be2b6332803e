// The small source models of the EPContext tests, built in code: each has Vulkan partitions and CPU-fallback nodes
// (Mod and ReverseSequence have no Vulkan kernel) whose initializers stay in the ctx model, two inputs and two outputs
// declared in an order that differs from the order the nodes use them.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::testing {

enum class Topology {
  kOnePartition,   // Add, Add, Mul, Relu (Vulkan) → Mod, ReverseSequence (CPU)
  kTwoPartitions,  // Add, Mul, Relu (Vulkan) → Mod, ReverseSequence (CPU) → Add, Sigmoid (Vulkan)
  kIfBody,         // If: then = the two-partition chain, else = Sub, Tanh, Neg; partitions only inside the bodies
};

const char* topologyName(Topology topology);
// EPContext nodes a compile gives (every partition of every graph).
int expectedPartitions(Topology topology);
// Initializers only Vulkan partitions read: the context binary holds them, the ctx model must not.
std::set<std::string> vulkanInitializers(Topology topology);
// Initializers CPU-fallback nodes read: they stay in the ctx model; the main graph's ones of at least 64 bytes are
// "M" (64 bytes), the small ones "lens" (16 bytes; in the If model it lives in the then-branch).
std::set<std::string> cpuInitializers(Topology topology);

struct SourceModel {
  std::string path;      // <folder>/<name>.onnx
  std::string dataFile;  // <folder>/<name>_weights.bin when the main graph's initializers are external, else empty
  onnx::ModelProto proto;  // as written (external references, if any)
};

// Writes the model into `folder`. `variant` changes the weights (the second model of a sharing group); with
// `externalData` every main-graph initializer goes to <name>_weights.bin.
SourceModel writeSourceModel(Topology topology, const std::string& folder, const std::string& name, int variant,
                             bool externalData);

// The inputs each model is run with (the If model: both branches).
std::vector<std::vector<NamedTensor>> inputSets(Topology topology);

}  // namespace kiln::testing
