// The JSON of the engine's structures that kiln prints and kiln-studio may read: one schema per struct, written here
// only (the keys are part of the CLI's contract: engine/ARCHITECTURE.md, Contracts).
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/context_binary.h"
#include "kiln/device.h"
#include "kiln/timings.h"
#include "kiln/value.h"
#include "kiln/value_metadata.h"

namespace kiln::app {

// A context binary's header, sections, graphs and sizes (kiln inspect/compile --json).
nlohmann::json toJson(const ContextBinaryInfo& info);
// Its parts, and a value's declared type: the same objects in kiln's JSON and in the Python package's dicts
// (app/python builds those from these), so the two faces cannot drift apart.
nlohmann::json toJson(const ContextBinaryGraph& graph);
nlohmann::json toJson(const ContextBinarySection& section);
nlohmann::json toJson(const ValueMetadata& value);  // dtype as ONNX's element type number, shape dims int/str/null
// What a viewer says of a binary that does not record which nodes dispatch each pipeline (no pipeline_users
// section): kiln inspect and kiln-studio's SPIR-V tab.
inline constexpr const char* kNoPipelineUsersNote =
    "this binary does not record which nodes use each pipeline (written by Kiln before context-binary format 1.2)";
// {"verdict", "against", "reasons"} (kiln check/inspect --json).
nlohmann::json toJson(const CompatibilityVerdict& verdict);
// One device of kiln devices --json: identity, features and limits.
nlohmann::json toJson(const VulkanDeviceDescription& device);
// {"load_ms": ..., ...} and {"glslang_compiles": ..., ...} with the Contracts' key names.
nlohmann::json timingsToJson(const SessionTimings& timings);
nlohmann::json countersToJson(const WorkCounters& counters);

}  // namespace kiln::app
