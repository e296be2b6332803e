#include "shape_check.h"

#include "kiln/model_info.h"

namespace kiln::bridge {

Status checkShapeInputs(const QString& modelPath, const QStringList& shapes) {
  if (shapes.isEmpty()) return Status::ok();
  auto model = inspectModel(modelPath.toStdString());
  if (!model.isOk()) return model.status();
  QStringList inputs;
  for (const auto& input : model->inputs) inputs << QString::fromStdString(input.name);
  for (const QString& entry : shapes) {
    const QString name = entry.section(QLatin1Char('='), 0, 0).trimmed();
    if (!inputs.contains(name)) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    QStringLiteral("a shape (%1) is given for '%2', which is not an input of %3 (its inputs: %4)")
                        .arg(entry.section(QLatin1Char('='), 1), name, modelPath.section(QLatin1Char('/'), -1),
                             inputs.join(QStringLiteral(", ")))
                        .toStdString());
    }
  }
  return Status::ok();
}

}  // namespace kiln::bridge
