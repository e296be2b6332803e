// HexView: the binary inspector's hex dump of one section, reading from the file only the lines in view.
#pragma once

#include <QAbstractScrollArea>
#include <QByteArray>
#include <QString>
#include <QStringList>

#include "binary_inspection.h"

namespace kiln::studio {

// A hex dump of one byte range of a binary (offset | 16 hex bytes | ASCII), for ranges of any size: it formats
// and reads from the file only the lines in view.
class HexView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  explicit HexView(QWidget* parent = nullptr);

  // Shows bytes [offset, offset + size) of `source` (offsets relative to the binary's byte 0, which is how the
  // address column counts). An empty source clears the view; `message` is shown instead of bytes when set.
  void setRange(const bridge::BinarySource& source, qint64 offset, qint64 size);
  void showMessage(const QString& message);

  qint64 lineCount() const { return (size_ + 15) / 16; }
  // The text of line `line` as painted (reads that line's bytes); "" past the end.
  QString lineText(qint64 line) const;
  // The lines currently in view, first to last, as painted.
  QStringList visibleLines() const;
  QString errorText() const { return error_; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  int lineHeight() const;
  int linesPerPage() const;
  void updateScrollBar();
  // The bytes of lines [first, first + count), from a one-window cache refilled from the file on a miss.
  QByteArray windowBytes(qint64 first, qint64 count) const;

  bridge::BinarySource source_;
  qint64 offset_ = 0, size_ = 0;
  QString message_;
  mutable QString error_;
  mutable qint64 cacheStart_ = -1;
  mutable QByteArray cache_;
};

}  // namespace kiln::studio
