#include "node_overlay.h"

#include <QPainter>
#include <QLinearGradient>

#include <algorithm>
#include <cmath>

#include "graph_view.h"

namespace kiln::studio {

namespace {

// The scale's stops: pale yellow, orange, dark red (a sequential ramp readable on white and on EP colours).
const QColor kLow(0xff, 0xf5, 0x9d), kMid(0xfb, 0x8c, 0x00), kHigh(0xb7, 0x1c, 0x1c);

QColor blend(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

}  // namespace

QImage errorHistogramImage(const QVector<qint64>& counts, int width, const QColor& text) {
  constexpr int kHeight = 150, kTop = 16, kBottom = 34, kLeft = 6, kRight = 6;
  QImage image(std::max(width, 160), kHeight, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  if (counts.isEmpty()) return image;
  QPainter painter(&image);
  QFont font = painter.font();
  font.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.8));
  painter.setFont(font);
  const QFontMetrics metrics(font);
  const qint64 most = std::max<qint64>(1, *std::max_element(counts.begin(), counts.end()));
  const double slot = static_cast<double>(image.width() - kLeft - kRight) / counts.size();
  const int baseline = kHeight - kBottom;
  auto compact = [](qint64 n) {
    if (n >= 1000000) return QStringLiteral("%1M").arg(n / 1e6, 0, 'g', 2);
    if (n >= 1000) return QStringLiteral("%1k").arg(n / 1e3, 0, 'g', 2);
    return QString::number(n);
  };
  for (int bin = 0; bin < counts.size(); ++bin) {
    const double x = kLeft + bin * slot;
    const double h = counts[bin] == 0 ? 0 : std::max(2.0, (baseline - kTop) * static_cast<double>(counts[bin]) / most);
    // Small differences pale, large ones dark: the overlay's own scale.
    const double t = static_cast<double>(bin) / std::max<qsizetype>(1, counts.size() - 1);
    const QColor fill = t < 0.5 ? blend(kLow, kMid, t * 2) : blend(kMid, kHigh, (t - 0.5) * 2);
    painter.fillRect(QRectF(x + 1, baseline - h, slot - 2, h), fill);
    painter.setPen(QColor(0x80, 0x80, 0x80));
    painter.drawRect(QRectF(x + 1, baseline - h, slot - 2, h));
    painter.setPen(text);
    // A count that does not fit over its bar is left out (the tallest one always shows): no overlapping labels.
    const QString label = compact(counts[bin]);
    if (counts[bin] > 0 && (metrics.horizontalAdvance(label) <= slot + 2 || counts[bin] == most)) {
      painter.drawText(QRectF(x - 10, baseline - h - metrics.height(), slot + 20, metrics.height()), Qt::AlignCenter, label);
    }
  }
  painter.setPen(text);
  painter.drawLine(kLeft, baseline, image.width() - kRight, baseline);
  // Decade labels under every other bin edge ("1e-10", "1e-8", ... "100"), every fourth when a narrow chart has
  // no room for them.
  int step = 2;
  while (step < 8 && step * slot < metrics.horizontalAdvance(QStringLiteral("1e-10")) + 6) step *= 2;
  for (int bin = 1; bin < counts.size(); bin += step) {
    const double edge = kiln::errorHistogramLowerEdge(bin);
    const QString label = edge >= 1 ? QString::number(edge, 'g', 3) : QStringLiteral("1e%1").arg(bin - 11);
    const double x = kLeft + bin * slot;
    painter.drawLine(QPointF(x, baseline), QPointF(x, baseline + 3));
    painter.drawText(QRectF(x - 20, baseline + 3, 40, metrics.height()), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  painter.drawText(QRectF(0, baseline + 4 + metrics.height(), image.width(), metrics.height()), Qt::AlignHCenter,
                   QObject::tr("|difference|"));
  return image;
}

QString formatMetric(const QString& metric, double value) {
  if (metric.endsWith(QLatin1String("_ms"))) return QStringLiteral("%1 ms").arg(value, 0, 'g', 3);
  return QString::number(value, 'g', 4);
}

void NodeOverlay::setData(const bridge::NodeMetrics& data, const QString& metric) {
  clear();
  metric_ = metric;
  kind_ = data.kind;
  identity_ = data;
  identity_.nodes.clear();
  for (const auto& row : data.nodes) {
    rows_.insert(row.node, row);
    if (row.firstDivergence) firstDivergence_ = row.node;
    const auto it = row.metrics.find(metric);
    if (it == row.metrics.end() || !std::isfinite(it.value())) continue;
    values_.insert(row.node, it.value());
  }
  if (values_.isEmpty()) return;
  const auto [low, high] = std::minmax_element(values_.begin(), values_.end());
  min_ = *low;
  max_ = *high;
  // Two decades or more between the smallest positive value and the largest: a log scale keeps the small ones apart.
  log_ = min_ > 0 && max_ / min_ > 100;
}

void NodeOverlay::clear() {
  metric_.clear();
  firstDivergence_.clear();
  kind_.clear();
  values_.clear();
  rows_.clear();
  identity_ = {};
  min_ = max_ = 0;
  log_ = false;
}

const bridge::NodeMetricRow* NodeOverlay::row(const QString& node) const {
  const auto it = rows_.constFind(node);
  return it == rows_.constEnd() ? nullptr : &it.value();
}

std::optional<double> NodeOverlay::value(const QString& node) const {
  const auto it = values_.find(node);
  if (it == values_.end()) return std::nullopt;
  return it.value();
}

double NodeOverlay::position(double value) const {
  if (max_ <= min_) return max_ > 0 ? 1.0 : 0.0;  // one value (or all equal): nonzero is "high"
  const double t = log_ ? (std::log(std::max(value, min_)) - std::log(min_)) / (std::log(max_) - std::log(min_))
                        : (value - min_) / (max_ - min_);
  return std::clamp(t, 0.0, 1.0);
}

QColor NodeOverlay::colorForValue(double value) const {
  const double t = position(value);
  return t < 0.5 ? blend(kLow, kMid, t * 2) : blend(kMid, kHigh, (t - 0.5) * 2);
}

std::optional<QColor> NodeOverlay::colorFor(const QString& node) const {
  if (!firstDivergence_.isEmpty() && node == firstDivergence_) return QColor(kFirstDivergence);
  const auto v = value(node);
  if (!v) return std::nullopt;
  return colorForValue(*v);
}

QList<std::pair<QString, double>> NodeOverlay::topNodes(int n) const {
  QList<std::pair<QString, double>> all;
  for (auto it = values_.begin(); it != values_.end(); ++it) all << std::make_pair(it.key(), it.value());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return all.mid(0, n);
}

bridge::OverlayBinding NodeOverlay::binding(const bridge::GraphDocument& document, const ModelIdentity& identity) const {
  int namesFound = 0;
  for (const bridge::GraphNode& node : document.nodes()) {
    if (node.kind == bridge::GraphNode::Kind::Op && rows_.contains(node.name)) ++namesFound;
  }
  return bridge::bindOverlay(identity_, static_cast<int>(rows_.size()), identity, namesFound);
}

int NodeOverlay::applyTo(GraphView* view, const bridge::GraphDocument& document, const ModelIdentity& identity) const {
  const bridge::OverlayBinding placed = isEmpty() ? bridge::OverlayBinding{} : binding(document, identity);
  const bool paint = !isEmpty() && placed.shown();
  int coloured = 0;
  for (auto it = view->nodeItems().begin(); it != view->nodeItems().end(); ++it) {
    if (it.key() < 0 || it.key() >= static_cast<int>(document.nodes().size())) continue;
    const bridge::GraphNode& node = document.nodes()[it.key()];
    if (node.kind != bridge::GraphNode::Kind::Op) continue;  // graph inputs and outputs keep their own colour
    const auto color = paint ? colorFor(node.name) : std::nullopt;
    it.value()->setFillColor(color ? *color : !paint ? epQColor(node.executionProvider) : QColor(kNoData));
    coloured += color ? 1 : 0;
  }
  // The legend floats in the view's bottom-left corner (a child of its viewport, so the view's code is untouched).
  auto* legend = view->viewport()->findChild<OverlayLegend*>(QStringLiteral("graphOverlayLegend"));
  if (isEmpty()) {
    if (legend) legend->hide();
    return coloured;
  }
  if (!legend) {
    legend = new OverlayLegend(view->viewport());
    legend->setObjectName(QStringLiteral("graphOverlayLegend"));
    legend->setAutoFillBackground(true);
  }
  legend->setOverlay(this, !firstDivergence_.isEmpty(), placed);
  const int width = std::min(360, std::max(200, view->viewport()->width() - 16));
  legend->resize(width, legend->heightForWidth(width));
  legend->move(8, std::max(0, view->viewport()->height() - legend->height() - 8));
  legend->show();
  legend->raise();
  return coloured;
}

int NodeOverlay::nodeIndex(const bridge::GraphDocument& document, const QString& node) {
  for (int i = 0; i < document.nodes().size(); ++i) {
    if (document.nodes()[i].kind == bridge::GraphNode::Kind::Op && document.nodes()[i].name == node) return i;
  }
  return -1;
}

OverlayLegend::OverlayLegend(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("overlayLegend"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void OverlayLegend::setOverlay(const NodeOverlay* overlay, bool showFirstDivergence, const bridge::OverlayBinding& binding) {
  overlay_ = overlay;
  firstDivergence_ = showFirstDivergence;
  binding_ = binding;
  updateGeometry();
  update();
}

namespace {
constexpr int kNoteFlags = Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap;
}  // namespace

int OverlayLegend::noteHeight(int width) const {
  if (binding_.note.isEmpty()) return 0;
  return fontMetrics().boundingRect(QRect(0, 0, std::max(1, width - 8), 10000), kNoteFlags, binding_.note).height() + 4;
}

int OverlayLegend::scaleHeight() const { return binding_.shown() ? fontMetrics().height() * 2 + 26 : 4; }

QSize OverlayLegend::sizeHint() const { return {360, heightForWidth(360)}; }

int OverlayLegend::heightForWidth(int width) const { return scaleHeight() + noteHeight(width); }

void OverlayLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QFontMetrics metrics(font());
  if (!overlay_ || overlay_->isEmpty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignLeft | Qt::AlignVCenter, tr("No per-node data: run a comparison or load a file"));
    return;
  }
  if (!binding_.note.isEmpty()) {
    // How the data was placed, or why it is not shown: under the scale, or alone when no node is coloured.
    painter.setPen(palette().color(binding_.shown() ? QPalette::PlaceholderText : QPalette::Text));
    painter.drawText(QRect(4, scaleHeight(), width() - 8, noteHeight(width())), kNoteFlags, binding_.note);
  }
  if (!binding_.shown()) return;
  const int line = metrics.height();
  painter.translate(4, 2);  // a margin inside the background a floating legend fills
  painter.setPen(palette().color(QPalette::Text));
  QString title = tr("Node colour: %1%2").arg(overlay_->metric(), overlay_->logarithmic() ? tr(" (log scale)") : QString());
  painter.drawText(0, metrics.ascent(), title);
  const int swatch = firstDivergence_ ? metrics.horizontalAdvance(tr("first divergence")) + line + 16 : 0;
  const QRect bar(0, line + 4, std::max(60, width() - swatch - 12), 12);
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const double value = overlay_->logarithmic()
                             ? std::exp(std::log(overlay_->minimum()) + t * (std::log(overlay_->maximum()) - std::log(overlay_->minimum())))
                             : overlay_->minimum() + t * (overlay_->maximum() - overlay_->minimum());
    gradient.setColorAt(t, overlay_->colorForValue(value));
  }
  painter.fillRect(bar, gradient);
  painter.setPen(QColor(0x60, 0x60, 0x60));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::Text));
  const int labelY = bar.bottom() + 2 + metrics.ascent();
  painter.drawText(bar.left(), labelY, formatMetric(overlay_->metric(), overlay_->minimum()));
  const QString high = formatMetric(overlay_->metric(), overlay_->maximum());
  painter.drawText(bar.right() - metrics.horizontalAdvance(high), labelY, high);
  if (firstDivergence_) {
    const QRect box(bar.right() + 12, bar.top(), line, 12);
    painter.fillRect(box, QColor(NodeOverlay::kFirstDivergence));
    painter.drawText(box.right() + 4, bar.top() + metrics.ascent() - 2, tr("first divergence"));
  }
  // No-data swatch, after the title.
  const int x = metrics.horizontalAdvance(title) + 16;
  const QRect none(x, 2, line - 4, line - 4);
  painter.fillRect(none, QColor(NodeOverlay::kNoData));
  painter.setPen(QColor(0x60, 0x60, 0x60));
  painter.drawRect(none.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(none.right() + 4, metrics.ascent(), tr("no data"));
}

}  // namespace kiln::studio
