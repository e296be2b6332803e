// Process-wide state: what Kiln keeps alive across sessions, and how to inspect and release it. ONNX Runtime
// gathers this in Ort::Env; Kiln has no environment object to create first: the state below comes into being on
// first use, and these functions (all thread-safe) let a program see it and give it back.
//
// - Vulkan devices: a session on a Vulkan device opens it once for the process; the device (with its pipelines)
//   stays open after the last session using it ends, so a later session skips device and pipeline creation.
//   releaseUnusedDevices() closes the ones no live session holds. Open devices are never closed at exit.
// - CPU thread pools: one pool per thread count (kiln.intra_op_num_threads), shared by every session that asks for
//   that count, and destroyed with the last session holding it. Nothing to release by hand.
// - Context binaries shared at inference (ep.share_ep_contexts=1): sessions naming the same binary share its
//   decoded graphs and weights; an entry lives as long as some session holds it.
// - The weight-sharing group at generation (ep.share_ep_contexts=1 with ep.context_enable=1): compiled sessions
//   join one pending group, written when a session sets ep.stop_share_ep_contexts=1; until then the group holds
//   its members' compiled partitions. discardPendingShareGroup() drops an abandoned group.
// - OpenBLAS: creating a session (its CPU EP) sets OpenBLAS to one thread for the process; the CPU EP splits GEMMs
//   over its own pool, and OpenBLAS threads beside it would only spin.
// - Logging: one process-wide sink, set with setLogSink() (kiln/log.h); by default warnings and errors go to stderr.
#pragma once

#include "kiln/export.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/log.h"

namespace kiln {

// Indices (listVulkanDevices() numbering) of the Vulkan devices open now, held by sessions or kept for reuse.
KILN_EXPORT std::vector<uint32_t> openVulkanDevices();

// Closes every open Vulkan device that no live session holds (its pipelines go with it); devices in use stay open.
KILN_EXPORT void releaseUnusedDevices();

// Thread counts of the CPU thread pools alive now (one pool per count), ascending.
KILN_EXPORT std::vector<int> liveThreadPools();

// How many sessions have joined the pending weight-sharing group at generation (0 when there is none).
KILN_EXPORT size_t pendingShareGroupMembers();

// Drops the pending weight-sharing group without writing it (its members' ctx models are then never written).
KILN_EXPORT void discardPendingShareGroup();

}  // namespace kiln
