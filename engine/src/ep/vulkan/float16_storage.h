// kiln.vulkan.fp16=1 (ncnn's use_fp16_storage): a float32 partition rewritten at compile time to keep its float
// tensors, weights included, as float16 on the device. Kernels still compute in float32 (shaders/storage.glsl),
// so only storage rounding is added. The partition's inputs and outputs stay float32 (Casts on the device at its
// edges), and nodes whose Vulkan kernel does not take float16 keep float32 with Casts around them, as do readers of
// floats cast from integers (int32 accumulators of ConvInteger/MatMulInteger, beyond float16's range). The rewritten
// graph is what the context binary stores, so a binary compiled this way holds float16 weights and float16
// SPIR-V variants only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/float16_tensor.h"

namespace kiln::vk {

struct Float16StorageStats {
  int64_t nodes = 0;         // nodes that now read and write float16
  int64_t initializers = 0;  // float32 initializers stored as float16
  int64_t casts = 0;         // Cast nodes added at the float16/float32 boundaries
};

// Answers, for a graph whose float32 values and initializers all became float16, which nodes a float16 kernel
// claims (true per node, in graph order).
using Float16Claims = std::function<std::vector<bool>(const ir::Graph& allFloat16)>;

// Rewrites `graph` (a partition: its inputs and `outputs` keep their float32 types and names) to store float32
// tensors as float16 wherever `claims` says the consuming and producing kernels take float16.
Float16StorageStats storeFloatsAsFloat16(ir::Graph& graph, const std::vector<std::string>& outputs,
                                         const Float16Claims& claims);

}  // namespace kiln::vk
