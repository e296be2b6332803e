#include "input_shapes_text.h"

#include <QStringList>

#include "shape_syntax.h"

namespace kiln::bridge {

Result<InputShapes> parseInputShapes(const QString& text) {
  auto parsed = app::parseNamedShapeList(text.toStdString());
  if (!parsed.isOk()) return Status(StatusCode::INVALID_ARGUMENT, "input shapes: " + parsed.status().message());
  InputShapes shapes;
  for (auto& [name, dims] : *parsed) {
    if (!shapes.emplace(name, dims).second) {
      return Status(StatusCode::INVALID_ARGUMENT, "input shapes: '" + name + "' is given twice");
    }
  }
  return shapes;
}

QString declaredInputShapes(const ModelInfo& info) {
  QStringList entries;
  for (const ValueMetadata& input : info.inputs) {
    if (!input.hasShape) continue;
    QStringList dims;
    for (const Dimension& dim : input.shape) dims << (dim.isFixed() ? QString::number(dim.value) : QStringLiteral("?"));
    entries << QStringLiteral("%1=%2").arg(QString::fromStdString(input.name), dims.join(u'x'));
  }
  return entries.join(QStringLiteral("; "));
}

QString formatInputShapes(const InputShapes& shapes) {
  QStringList entries;
  for (const auto& [name, dims] : shapes) {
    entries << QStringLiteral("%1=%2").arg(QString::fromStdString(name), QString::fromStdString(app::formatDims(dims)));
  }
  return entries.join(QStringLiteral("; "));
}

}  // namespace kiln::bridge
