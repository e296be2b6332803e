// The shape syntax kiln and kiln-studio share: `NAME=1x3x640x640` (kiln run/bench/compile --shape, the compile
// form's shapes field) and lists of such entries. One parser, so the CLI and the studio accept the same text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/session_options.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::app {

// A shape given for one named model input.
struct NamedShape {
  std::string name;
  Shape dims;
};

// "1x3x640x640": non-negative decimal dimensions separated by 'x'. INVALID_ARGUMENT naming the text (and, for an
// empty, non-digit, or too large dimension, that dimension) otherwise; never throws.
Result<Shape> parseDims(std::string_view text);
// "NAME=1x3x640x640"; INVALID_ARGUMENT for a missing name, a missing '=' or bad dimensions.
Result<NamedShape> parseNamedShape(std::string_view text);
// Entries separated by whitespace, ',' or ';' ("x=1x3x64x64, mask=1x10"); an empty text is an empty list.
Result<std::vector<NamedShape>> parseNamedShapeList(std::string_view text);
// Each "NAME=DIMS" entry (as --shape takes them) set on `options` with SessionOptions::setInputShape; the session
// checks them against the model. Returns the parsed shapes.
Result<std::vector<NamedShape>> applyShapeEntries(const std::vector<std::string>& entries, SessionOptions& options);
// "1x3x640x640" for {1, 3, 640, 640}.
std::string formatDims(const Shape& dims);

}  // namespace kiln::app
