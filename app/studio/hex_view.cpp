#include "hex_view.h"

#include <QFontDatabase>
#include <QPainter>
#include <QScrollBar>

#include <algorithm>

namespace kiln::studio {

HexView::HexView(QWidget* parent) : QAbstractScrollArea(parent) {
  setObjectName(QStringLiteral("hexView"));
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  setFont(font);
  viewport()->setFont(font);
  viewport()->setBackgroundRole(QPalette::Base);
  viewport()->setAutoFillBackground(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  verticalScrollBar()->setSingleStep(1);
  connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(), qOverload<>(&QWidget::update));
}

void HexView::setRange(const bridge::BinarySource& source, qint64 offset, qint64 size) {
  source_ = source;
  offset_ = offset;
  size_ = std::max<qint64>(0, size);
  message_.clear();
  error_.clear();
  cacheStart_ = -1;
  cache_.clear();
  verticalScrollBar()->setValue(0);
  updateScrollBar();
  viewport()->update();
}

void HexView::showMessage(const QString& message) {
  setRange({}, 0, 0);
  message_ = message;
  viewport()->update();
}

int HexView::lineHeight() const { return fontMetrics().height(); }

int HexView::linesPerPage() const { return std::max(1, viewport()->height() / std::max(1, lineHeight())); }

void HexView::updateScrollBar() {
  // A scroll bar counts in lines and QScrollBar's range is an int: 2^31 lines are 32 GiB, beyond any section.
  const qint64 maximum = std::max<qint64>(0, lineCount() - linesPerPage());
  verticalScrollBar()->setRange(0, static_cast<int>(std::min<qint64>(maximum, INT_MAX)));
  verticalScrollBar()->setPageStep(linesPerPage());
  const int width = fontMetrics().horizontalAdvance(bridge::formatHexLine(0, QByteArray(16, 'x'))) + 16;
  horizontalScrollBar()->setRange(0, std::max(0, width - viewport()->width()));
  horizontalScrollBar()->setPageStep(viewport()->width());
}

QByteArray HexView::windowBytes(qint64 first, qint64 count) const {
  const qint64 begin = first * 16, end = std::min(size_, (first + count) * 16);
  if (begin >= end) return {};
  if (cacheStart_ < 0 || begin < cacheStart_ || end > cacheStart_ + cache_.size()) {
    // Miss: read this window plus a page either side, so scrolling by a line or a page reads nothing.
    const qint64 margin = count * 16;
    const qint64 start = std::max<qint64>(0, begin - margin);
    const qint64 stop = std::min(size_, end + margin);
    auto bytes = bridge::readBinaryBytes(source_, offset_ + start, stop - start);
    if (!bytes.isOk()) {
      error_ = QString::fromStdString(bytes.status().toString());
      cacheStart_ = -1;
      cache_.clear();
      return {};
    }
    error_.clear();
    cacheStart_ = start;
    cache_ = *bytes;
  }
  return cache_.mid(begin - cacheStart_, end - begin);
}

QString HexView::lineText(qint64 line) const {
  if (line < 0 || line >= lineCount()) return {};
  return bridge::formatHexLine(offset_ + line * 16, windowBytes(line, 1));
}

QStringList HexView::visibleLines() const {
  const qint64 first = verticalScrollBar()->value();
  const qint64 count = std::min<qint64>(linesPerPage(), lineCount() - first);
  return bridge::formatHexDump(offset_ + first * 16, windowBytes(first, std::max<qint64>(0, count)));
}

void HexView::paintEvent(QPaintEvent*) {
  QPainter painter(viewport());
  const int height = lineHeight();
  const int x = 6 - horizontalScrollBar()->value();
  if (!message_.isEmpty() || size_ == 0) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(viewport()->rect().adjusted(6, 4, -6, -4), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                     message_.isEmpty() ? tr("Select a section to see its bytes") : message_);
    return;
  }
  const QStringList lines = visibleLines();
  if (!error_.isEmpty()) {
    painter.setPen(QColor(0xc6, 0x28, 0x28));
    painter.drawText(viewport()->rect().adjusted(6, 4, -6, -4), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, error_);
    return;
  }
  const QFontMetrics metrics(font());
  const int addressWidth = metrics.horizontalAdvance(lines.isEmpty() ? QString() : lines.first().section(QLatin1Char(' '), 0, 0));
  for (int i = 0; i < lines.size(); ++i) {
    const int y = 2 + i * height + metrics.ascent();
    // The address column in a muted colour, the bytes and ASCII in the text colour.
    const QString& line = lines[i];
    const qsizetype split = line.indexOf(QLatin1Char(' '));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(x, y, line.left(split));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(x + addressWidth, y, line.mid(split));
  }
}

void HexView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollBar();
}

}  // namespace kiln::studio
