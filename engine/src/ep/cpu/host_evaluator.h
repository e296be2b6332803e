// The CPU EP's kernels as a HostEvaluator (ep/host_evaluator.h), for EPs that evaluate shape arithmetic on the host.
#pragma once

#include <memory>

#include "ep/host_evaluator.h"

namespace kiln::cpu {

// Evaluates nodes with the CPU kernel registry, single-threaded. Stateless: one instance serves every session.
std::shared_ptr<const HostEvaluator> hostEvaluator();

}  // namespace kiln::cpu
