// Status lines in the studio's panels (the compare panel's, the binary inspector's summary and verdict, the merge
// wizard's): made and colored one way, so every panel shows an error in the same red and a warning in the same amber.
#pragma once

#include <QColor>
#include <QString>

class QLabel;

namespace kiln::studio {

// How a status line reads: plain text, a warning (amber) or an error (red).
enum class StatusTone { Normal, Warning, Error };

// The text color of `tone`: #c62828 for Error, #b26a00 for Warning; an invalid QColor for Normal (the palette's).
QColor statusToneColor(StatusTone tone);

// A word-wrapped label named `objectName` whose text the mouse can select, for a status line.
QLabel* makeStatusLabel(const QString& objectName);

// Shows `text` on `label` in the color of `tone`.
void setStatus(QLabel* label, const QString& text, StatusTone tone = StatusTone::Normal);

// Colors `label`'s text by `tone`, leaving the text as it is.
void setStatusTone(QLabel* label, StatusTone tone);

}  // namespace kiln::studio
