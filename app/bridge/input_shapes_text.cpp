#include "input_shapes_text.h"

#include <QRegularExpression>
#include <QStringList>

namespace kiln::bridge {

namespace {

Status entryError(const QString& entry, const QString& why) {
  return Status(StatusCode::INVALID_ARGUMENT,
                QStringLiteral("input shape '%1': %2").arg(entry, why).toStdString());
}

}  // namespace

Result<InputShapes> parseInputShapes(const QString& text) {
  InputShapes shapes;
  static const QRegularExpression entrySeparator(QStringLiteral("[;\\s]+"));
  static const QRegularExpression dimSeparator(QStringLiteral("[,xX]"));
  for (const QString& entry : text.split(entrySeparator, Qt::SkipEmptyParts)) {
    const qsizetype equals = entry.indexOf(u'=');
    if (equals < 0) return entryError(entry, QStringLiteral("write it as NAME=1,3,640,640"));
    const QString name = entry.left(equals).trimmed();
    if (name.isEmpty()) return entryError(entry, QStringLiteral("no input name before '='"));
    const QString dimsText = entry.mid(equals + 1);
    std::vector<int64_t> dims;
    if (!dimsText.isEmpty()) {  // "name=" is a scalar
      for (const QString& dim : dimsText.split(dimSeparator)) {
        bool ok = false;
        const qlonglong value = dim.trimmed().toLongLong(&ok);
        if (!ok || value < 0) {
          return entryError(entry, QStringLiteral("'%1' is not a dimension (a non-negative integer)").arg(dim));
        }
        dims.push_back(value);
      }
    }
    if (!shapes.emplace(name.toStdString(), std::move(dims)).second) {
      return entryError(entry, QStringLiteral("'%1' is given twice").arg(name));
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
    entries << QStringLiteral("%1=%2").arg(QString::fromStdString(input.name), dims.join(u','));
  }
  return entries.join(QStringLiteral("; "));
}

QString formatInputShapes(const InputShapes& shapes) {
  QStringList entries;
  for (const auto& [name, dims] : shapes) {
    QStringList text;
    for (int64_t d : dims) text << QString::number(d);
    entries << QStringLiteral("%1=%2").arg(QString::fromStdString(name), text.join(u','));
  }
  return entries.join(QStringLiteral("; "));
}

}  // namespace kiln::bridge
