// Renderings of the engine's context-binary structures (kiln/context_binary.h) shared by kiln compile, inspect
// and check: one JSON shape and one text layout for each.
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/context_binary.h"

namespace kiln::cli {

nlohmann::json toJson(const ContextBinaryInfo& info);
nlohmann::json toJson(const CompatibilityVerdict& verdict);
void printText(const ContextBinaryInfo& info);
void printText(const CompatibilityVerdict& verdict);

}  // namespace kiln::cli
