#include "shape_syntax.h"

#include <charconv>

namespace kiln::app {
namespace {

constexpr const char* kExample = "1x3x640x640";

Status badShape(std::string_view text, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT,
                "shape '" + std::string(text) + "' must look like " + kExample + (why.empty() ? "" : ": " + why));
}

bool isSeparator(char c) { return c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

Result<Shape> parseDims(std::string_view text) {
  if (text.empty()) return badShape(text, "");
  Shape shape;
  size_t pos = 0;
  while (true) {
    const size_t x = text.find('x', pos);
    const std::string_view part = text.substr(pos, x == std::string_view::npos ? std::string_view::npos : x - pos);
    if (part.empty()) return badShape(text, "a dimension is empty");
    int64_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (error == std::errc::result_out_of_range) {
      return badShape(text, "dimension " + std::string(part) + " is too large");
    }
    // from_chars accepts a leading '-': a negative size is as wrong as junk.
    if (error != std::errc() || end != part.data() + part.size() || part.front() == '-') {
      return badShape(text, "dimension '" + std::string(part) + "' is not a non-negative integer");
    }
    shape.push_back(value);
    if (x == std::string_view::npos) return shape;
    pos = x + 1;
  }
}

Result<NamedShape> parseNamedShape(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status(StatusCode::INVALID_ARGUMENT, "shape '" + std::string(text) + "' must look like NAME=" + kExample);
  }
  KILN_ASSIGN_OR_RETURN(Shape dims, parseDims(text.substr(eq + 1)));
  return NamedShape{std::string(text.substr(0, eq)), std::move(dims)};
}

Result<std::vector<NamedShape>> parseNamedShapeList(std::string_view text) {
  std::vector<NamedShape> shapes;
  size_t pos = 0;
  while (pos < text.size()) {
    if (isSeparator(text[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() && !isSeparator(text[end])) ++end;
    KILN_ASSIGN_OR_RETURN(NamedShape shape, parseNamedShape(text.substr(pos, end - pos)));
    shapes.push_back(std::move(shape));
    pos = end;
  }
  return shapes;
}

Result<std::vector<NamedShape>> applyShapeEntries(const std::vector<std::string>& entries, SessionOptions& options) {
  std::vector<NamedShape> shapes;
  for (const auto& entry : entries) {
    KILN_ASSIGN_OR_RETURN(NamedShape shape, parseNamedShape(entry));
    options.setInputShape(shape.name, shape.dims);
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::string formatDims(const Shape& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

}  // namespace kiln::app
