#include "chrome_trace.h"

#include <map>

#include "json_file.h"

namespace kiln::app {

namespace {

constexpr int kProcess = 1;
constexpr int kHostTrack = 1;
constexpr int kFirstDeviceTrack = 2;

double micros(double ms) { return ms * 1000.0; }

nlohmann::json metadata(const char* name, int tid, const std::string& value) {
  return {{"ph", "M"}, {"name", name}, {"pid", kProcess}, {"tid", tid}, {"args", {{"name", value}}}};
}

}  // namespace

nlohmann::json chromeTraceFromProfile(const RunProfile& profile, const std::string& model) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata("process_name", kHostTrack, "kiln run " + model));
  events.push_back(metadata("thread_name", kHostTrack, "CPU (host)"));
  // Fused nodes are named in their anchor's args: they ran inside its kernel.
  std::map<std::string, std::vector<std::string>> fusedInto;
  for (const NodeTiming& node : profile.nodes) {
    if (!node.fusedInto.empty()) fusedInto[node.fusedInto].push_back(node.node);
  }
  int deviceTrack = kFirstDeviceTrack;
  for (const NodeTiming& node : profile.nodes) {
    if (!node.fusedInto.empty() || node.calls == 0) continue;
    nlohmann::json args = {{"op_type", node.opType}, {"execution_provider", node.executionProvider},
                           {"graph", node.graph}, {"calls", node.calls}};
    if (auto fused = fusedInto.find(node.node); fused != fusedInto.end()) args["fused"] = fused->second;
    if (!node.covers.empty()) args["covers"] = node.covers;
    events.push_back({{"ph", "X"}, {"cat", node.covers.empty() ? "node" : "partition"}, {"name", node.node},
                      {"pid", kProcess}, {"tid", kHostTrack}, {"ts", micros(node.startMs)},
                      {"dur", micros(node.totalMs)}, {"args", std::move(args)}});
    if (node.deviceSpans.empty()) continue;
    // The partition's dispatches on a track of their own, from its host start.
    const int track = deviceTrack++;
    events.push_back(metadata("thread_name", track, node.node + " (" + node.executionProvider + " device)"));
    for (const DeviceSpan& span : node.deviceSpans) {
      events.push_back({{"ph", "X"}, {"cat", "dispatch"}, {"name", span.node}, {"pid", kProcess}, {"tid", track},
                        {"ts", micros(node.startMs + span.startMs)}, {"dur", micros(span.ms)},
                        {"args", {{"partition", node.node}, {"device_start_ms", span.startMs}, {"device_ms", span.ms}}}});
    }
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"producer", "kiln run"}, {"model", model}, {"run_ms", profile.runMs}}}};
}

Status writeChromeTrace(const std::string& path, const nlohmann::json& trace) {
  return writeJsonFileAtomically(path, trace, "the Chrome trace");
}

}  // namespace kiln::app
