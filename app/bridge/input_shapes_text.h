// Input shapes as the studio's users type them ("x=1x3x640x640", the syntax of kiln's --shape: app/common's
// shape_syntax.h is the one parser), for shape inference with concrete dimensions (kiln::inspectModel with input
// shapes). Qt-Core only.
#pragma once

#include <QString>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/model_info.h"
#include "kiln/status.h"

namespace kiln::bridge {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

// Parses app::parseNamedShapeList's syntax: "NAME=DxDx...", several inputs separated by ';', ',' or spaces; "" is
// no shapes. INVALID_ARGUMENT ("input shapes: ...") for what that parser refuses, or an input given twice. Names and
// ranks are the engine's to check (inspectModel).
Result<InputShapes> parseInputShapes(const QString& text);
// The model's inputs as their declaration reads in that syntax: "x=?x3x?x?" ('?' for a symbolic or unknown
// dimension, so the user sees which to fill in); inputs with no declared shape are left out.
QString declaredInputShapes(const ModelInfo& info);
// "x=1x3x640x640; mask=1x640" in name order; "" for none.
QString formatInputShapes(const InputShapes& shapes);

}  // namespace kiln::bridge
