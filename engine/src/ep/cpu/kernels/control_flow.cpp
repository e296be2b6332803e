// ControlFlow kernels (placeholder until the family lands).
#include "ep/cpu/kernel_registry.h"

namespace kiln::cpu {

void registerControlFlowKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln::cpu
