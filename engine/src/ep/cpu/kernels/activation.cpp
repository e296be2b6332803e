// Activation kernels (placeholder until the family lands).
#include "ep/cpu/kernel_registry.h"

namespace kiln::cpu {

void registerActivationKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace kiln::cpu
