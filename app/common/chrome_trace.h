// A profiled run as a Chrome trace (the Trace Event Format that chrome://tracing and ui.perfetto.dev open): one
// complete ("X") event per node on a "CPU" track, each compiled partition as one event there too, and, when the
// partition measured its device time (Vulkan: kiln.vulkan.profile=1), one event per device dispatch on a track of
// its own, named after the partition node that recorded it (NodeTiming::deviceSpans). Times are microseconds after the run's first node started; a device track
// is placed at its partition's host start (device timestamps keep their own spacing: the device clock is not the
// host's). Fused CPU nodes (no time of their own) are named in their anchor's args, not drawn.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "kiln/run_profile.h"
#include "kiln/status.h"

namespace kiln::app {

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {"producer", "model", "run_ms"}}.
nlohmann::json chromeTraceFromProfile(const RunProfile& profile, const std::string& model);

// Writes `trace` to `path` through a temporary file in the same folder and a rename (never half-written).
// FAIL naming the path when it cannot be written.
Status writeChromeTrace(const std::string& path, const nlohmann::json& trace);

}  // namespace kiln::app
