#include "status_label.h"

#include <QLabel>

namespace kiln::studio {

QColor statusToneColor(StatusTone tone) {
  switch (tone) {
    case StatusTone::Error:
      return QColor(0xc6, 0x28, 0x28);
    case StatusTone::Warning:
      return QColor(0xb2, 0x6a, 0x00);
    case StatusTone::Normal:
      break;
  }
  return {};
}

QLabel* makeStatusLabel(const QString& objectName) {
  auto* label = new QLabel;
  label->setObjectName(objectName);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

void setStatusTone(QLabel* label, StatusTone tone) {
  // A style sheet, as the panels always set: Normal clears it, so the text takes the palette's color again.
  label->setStyleSheet(tone == StatusTone::Normal ? QString()
                                                  : QStringLiteral("color: %1;").arg(statusToneColor(tone).name()));
}

void setStatus(QLabel* label, const QString& text, StatusTone tone) {
  label->setText(text);
  setStatusTone(label, tone);
}

}  // namespace kiln::studio
