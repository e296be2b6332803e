// The one shape parser of kiln and kiln-studio: NAME=1x3x640x640 and lists of entries, never throwing.
#include <gtest/gtest.h>

#include "shape_syntax.h"

namespace kiln::app {
namespace {

bool rejects(std::string_view text, const std::string& mention) {
  const auto dims = parseDims(text);
  return !dims.isOk() && dims.status().code() == StatusCode::INVALID_ARGUMENT &&
         dims.status().message().find(mention) != std::string::npos;
}

TEST(ShapeSyntax, ParsesDimensions) {
  EXPECT_EQ(parseDims("1x3x640x640").value(), (Shape{1, 3, 640, 640}));
  EXPECT_EQ(parseDims("7").value(), (Shape{7}));
  EXPECT_EQ(parseDims("0x2").value(), (Shape{0, 2}));
  EXPECT_EQ(parseDims("9223372036854775807").value(), (Shape{INT64_MAX}));
}

TEST(ShapeSyntax, RejectsOverflowNamingTheValue) {
  EXPECT_TRUE(rejects("99999999999999999999", "99999999999999999999"));
  EXPECT_TRUE(rejects("1x9223372036854775808", "9223372036854775808 is too large"));
}

TEST(ShapeSyntax, RejectsNegativeEmptyAndJunk) {
  EXPECT_TRUE(rejects("", "1x3x640x640"));
  EXPECT_TRUE(rejects("1x-3", "'-3'"));
  EXPECT_TRUE(rejects("1x", "empty"));
  EXPECT_TRUE(rejects("x1", "empty"));
  EXPECT_TRUE(rejects("1xx2", "empty"));
  EXPECT_TRUE(rejects("1x3xAx32", "'A'"));
  EXPECT_TRUE(rejects("1x3 ", "'3 '"));
  EXPECT_TRUE(rejects("+1", "'+1'"));
  EXPECT_TRUE(rejects("1,2", "'1,2'"));
}

TEST(ShapeSyntax, ParsesNamedShapes) {
  const auto shape = parseNamedShape("image=1x3x32x32");
  ASSERT_TRUE(shape.isOk()) << shape.status().toString();
  EXPECT_EQ(shape->name, "image");
  EXPECT_EQ(shape->dims, (Shape{1, 3, 32, 32}));
  EXPECT_EQ(parseNamedShape("a=b=1").status().code(), StatusCode::INVALID_ARGUMENT);  // name "a", dims "b=1"
  EXPECT_EQ(parseNamedShape("=1x2").status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(parseNamedShape("image").status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(parseNamedShape("image=").status().code(), StatusCode::INVALID_ARGUMENT);
}

TEST(ShapeSyntax, ParsesListsWithAnySeparator) {
  auto list = parseNamedShapeList(" image=2x3x32x32, mask=1;  other=4\n");
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].name, "image");
  EXPECT_EQ((*list)[1].dims, (Shape{1}));
  EXPECT_EQ((*list)[2].name, "other");
  EXPECT_TRUE(parseNamedShapeList("").value().empty());
  EXPECT_TRUE(parseNamedShapeList(" ,; ").value().empty());
  EXPECT_FALSE(parseNamedShapeList("image=1x, mask=1").isOk());
  EXPECT_FALSE(parseNamedShapeList("image=99999999999999999999").isOk());
}

TEST(ShapeSyntax, AppliesEntriesAsSessionInputShapes) {
  SessionOptions options;
  const auto applied = applyShapeEntries({"x=1x3", "y=2"}, options);
  ASSERT_TRUE(applied.isOk()) << applied.status().toString();
  EXPECT_EQ(options.inputShapes().at("x"), (Shape{1, 3}));
  EXPECT_EQ(options.inputShapes().at("y"), (Shape{2}));
  SessionOptions untouched;
  EXPECT_FALSE(applyShapeEntries({"x=1x3", "y=-2"}, untouched).isOk());
  EXPECT_EQ(formatDims({1, 3, 640, 640}), "1x3x640x640");
}

}  // namespace
}  // namespace kiln::app
