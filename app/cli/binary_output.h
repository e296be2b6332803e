// Text renderings of the engine's context-binary structures (kiln/context_binary.h) shared by kiln compile, inspect
// and check; their JSON is app/common/engine_json.h's.
#pragma once

#include <nlohmann/json.hpp>

#include "engine_json.h"
#include "kiln/context_binary.h"

namespace kiln::cli {

using app::toJson;  // the JSON schemas (app/common/engine_json.h)
void printText(const ContextBinaryInfo& info);
void printText(const CompatibilityVerdict& verdict);

}  // namespace kiln::cli
