// RunProfile: where one inference spent its time, node by node (RunOptions::setProfiling, Session::lastRunProfile).
// A compiled partition (Vulkan) runs as one unit, so it is timed as one entry that names the nodes it covers.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// One dispatch (or other device step) of a compiled partition's last call, timed by device timestamps.
struct KILN_EXPORT DeviceSpan {
  std::string node;    // the label of the partition's node that recorded it (after device fusions: a Conv with its
                       // folded BatchNormalization and activation keeps the Conv's label; a fused elementwise chain
                       // is named after its last node)
  double startMs = 0;  // ms after the partition's first step started on the device
  double ms = 0;
};

struct KILN_EXPORT NodeTiming {
  std::string node;               // node name as the session's graph has it (the partition name for a compiled one)
  std::string opType;             // "Conv", or "KilnPartition" for a compiled partition
  std::string graph;              // "main", or a body path such as "main/If_3.then_branch" (ir graph paths)
  std::string executionProvider;  // "CPUExecutionProvider", "VulkanExecutionProvider"
  double totalMs = 0;             // wall time of the node's kernel, summed over calls (0 when fused into another)
  int64_t calls = 0;              // times the node ran in the run (Loop bodies run many times; 0 when skipped)
  std::string fusedInto;          // non-empty: ran inside this node's kernel (elementwise epilogue), time counted there
  std::vector<std::string> covers;  // a compiled partition: labels of the model nodes it runs, in order
  // Parallel to `covers` when the partition measured its device time (Vulkan: session config kiln.vulkan.profile=1
  // and a device with timestamp queries), else empty: each covered node's device ms in the partition's last call.
  // 0 for a node that dispatched nothing of its own: fused into another node's dispatch, or evaluated on the host.
  std::vector<double> coveredMs = {};
  // Parallel to `coveredMs`: when each covered node's dispatch started on the device, ms after the partition's first
  // dispatch started (device timestamps, not the host clock); 0 where coveredMs is 0.
  std::vector<double> coveredStartMs = {};
  // A compiled partition that measured its device time: every step of its last call in run order, whether or not
  // its label names a model node (what coveredMs cannot attribute, such as a fused chain, is here).
  std::vector<DeviceSpan> deviceSpans = {};
  double startMs = 0;  // when its first call started, ms after the run's first node started (last: aggregate
                       // initializers written before it was added still compile)
};

struct KILN_EXPORT RunProfile {
  double runMs = 0;                // the whole run, binding inputs and collecting outputs included
  std::vector<NodeTiming> nodes;   // in first-execution order (a body's nodes follow the node that ran them)
};

}  // namespace kiln
