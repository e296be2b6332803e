// Pool kernels (placeholder until the family lands).
#include "ep/cpu/kernel_registry.h"

namespace kiln::cpu {

void registerPoolKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln::cpu
