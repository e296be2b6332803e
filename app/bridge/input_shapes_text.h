// Input shapes as the studio's users type them ("x=1,3,640,640"), for shape inference with concrete dimensions
// (kiln::inspectModel with input shapes). Qt-Core only.
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

// Parses "NAME=D,D,...": dimensions separated by ',' or 'x' ("x=1x3x640x640", as `kiln bench --shapes`), several
// inputs separated by ';' or spaces; "" is no shapes. INVALID_ARGUMENT naming the entry when one has no '=', no
// name, a dimension that is not a non-negative integer, or an input given twice. Names and ranks are the engine's
// to check (inspectModel).
Result<InputShapes> parseInputShapes(const QString& text);
// The model's inputs as their declaration reads in that syntax: "x=?,3,?,?" ('?' for a symbolic or unknown
// dimension, so the user sees which to fill in); inputs with no declared shape are left out.
QString declaredInputShapes(const ModelInfo& info);
// "x=1,3,640,640; mask=1,640" in name order; "" for none.
QString formatInputShapes(const InputShapes& shapes);

}  // namespace kiln::bridge
