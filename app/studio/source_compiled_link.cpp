#include "source_compiled_link.h"

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHash>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "graph_panel.h"
#include "graph_view.h"
#include "source_compiled_links.h"

namespace kiln::studio {

namespace {

// A small label on an edge: the values crossing host↔device there and their sizes. Sized in scene units like the
// tensor shapes on edges, and placed like them (GraphView::placeText), so it covers no node, caption or other text
// at any zoom; drawn only where it is legible.
class TransferBadgeItem : public QGraphicsItem {
 public:
  TransferBadgeItem(const QString& text, const QString& tooltip) : text_(text) {
    setToolTip(tooltip);
    setZValue(20);  // above edges and nodes
    const QFontMetricsF metrics(font());
    bounds_ = QRectF(0, 0, metrics.horizontalAdvance(text_) + 8, metrics.height() + 2);
  }
  int type() const override { return kTransferBadgeItemType; }
  QSizeF size() const { return bounds_.size(); }
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override {
    if (kBadgePx * option->levelOfDetailFromTransform(painter->worldTransform()) < kLegiblePx) return;
    // Fixed colors on their own background: readable on the light and the dark theme alike.
    painter->setPen(QPen(QColor(0x8a, 0x6d, 0x1e), 1));
    painter->setBrush(QColor(0xff, 0xf4, 0xc8));
    painter->drawRoundedRect(bounds_, 3, 3);
    painter->setFont(font());
    painter->setPen(QColor(0x3a, 0x2c, 0x00));
    painter->drawText(bounds_, Qt::AlignCenter, text_);
  }

 private:
  static constexpr double kBadgePx = 10;
  static QFont font() {
    QFont font;
    font.setPixelSize(static_cast<int>(kBadgePx));
    return font;
  }
  QString text_;
  QRectF bounds_;
};

}  // namespace

SourceCompiledLink::SourceCompiledLink(GraphPanel* source, GraphPanel* compiled, QObject* parent)
    : QObject(parent), source_(source), compiled_(compiled) {
  connect(source_->view(), &GraphView::nodeSelected, this, &SourceCompiledLink::onSourceSelected);
  connect(compiled_->view(), &GraphView::nodeSelected, this, &SourceCompiledLink::onCompiledSelected);
  // A new layout drops the items: what was highlighted there is gone, unless it is the graph opened to show it.
  connect(source_, &GraphPanel::layoutReady, this, [this] { onLaidOut(source_, &sourceHighlight_); });
  connect(compiled_, &GraphPanel::layoutReady, this, [this] { onLaidOut(compiled_, &compiledHighlight_); });
}

void SourceCompiledLink::onSourceSelected(int node) {
  const auto source = source_->document();
  const auto compiledRoot = compiled_->rootDocument();
  if (!source || !compiledRoot || compiled_->isHidden()) return;
  show(compiled_, bridge::findReplacingEpContextNode(*source, node, *compiledRoot), &compiledHighlight_);
}

void SourceCompiledLink::onCompiledSelected(int node) {
  const auto sourceRoot = source_->rootDocument();
  const auto compiled = compiled_->document();
  if (!sourceRoot || !compiled || source_->isHidden()) return;
  show(source_, bridge::findReplacedSourceNodes(*sourceRoot, *compiled, node), &sourceHighlight_);
}

void SourceCompiledLink::show(GraphPanel* panel, const bridge::GraphNodes& found, QVector<int>* kept) {
  pendingPanel_ = nullptr;
  if (!found.nodes.isEmpty() && found.graphPath != panel->currentGraphPath()) {
    // The counterpart is in another graph (an If/Loop body): open it there, highlight once it is laid out.
    pendingPanel_ = panel;
    pendingNodes_ = found.nodes;
    if (panel->openGraph(found.graphPath)) return;
    pendingPanel_ = nullptr;
  }
  highlight(panel, found.nodes, kept);
}

void SourceCompiledLink::onLaidOut(GraphPanel* panel, QVector<int>* kept) {
  kept->clear();
  if (pendingPanel_ != panel) return;
  pendingPanel_ = nullptr;
  highlight(panel, pendingNodes_, kept);
}

void SourceCompiledLink::highlight(GraphPanel* panel, const QVector<int>& nodes, QVector<int>* kept) {
  *kept = nodes;
  panel->view()->setHighlighted(nodes);
  if (nodes.isEmpty()) return;
  // Center on the highlighted nodes (those drawn; a collapsed partition stands for its nodes).
  QRectF area;
  for (int node : nodes) {
    if (QGraphicsItem* item = panel->view()->drawnItem(node)) area = area.united(item->sceneBoundingRect());
  }
  if (area.isNull()) return;
  // Nodes that fit at the current zoom are centered; more are brought into view whole (the zoom goes out).
  GraphView* view = panel->view();
  const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
  if (area.width() <= visible.width() && area.height() <= visible.height()) {
    view->centerOn(area.center());
  } else {
    view->fitInView(area.adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    view->updateLevelOfDetail();
  }
}

int addTransferBadges(GraphView* view, const bridge::GraphDocument& document) {
  auto drawn = [&](int node) { return view->drawnItem(node); };
  // Transfers between the same two drawn items share one badge.
  struct Badge {
    QGraphicsItem *from = nullptr, *to = nullptr;
    bool toDevice = true;
    int64_t knownBytes = 0;
    int count = 0, unknown = 0;
    QStringList values;
  };
  QVector<Badge> badges;
  QHash<QPair<QGraphicsItem*, QGraphicsItem*>, int> index;
  for (const bridge::BorderTransfer& t : bridge::borderTransfers(document)) {
    QGraphicsItem* from = drawn(t.from);
    QGraphicsItem* to = drawn(t.to);
    if (!from || !to || from == to) continue;
    const auto key = qMakePair(from, to);
    if (!index.contains(key)) {
      index.insert(key, static_cast<int>(badges.size()));
      badges.push_back({from, to, t.toDevice, 0, 0, 0, {}});
    }
    Badge& badge = badges[index.value(key)];
    badge.toDevice = t.toDevice;
    ++badge.count;
    if (t.bytes >= 0) {
      badge.knownBytes += t.bytes;
    } else {
      ++badge.unknown;
    }
    badge.values << QStringLiteral("%1: %2").arg(t.value, t.label());
  }
  for (const Badge& badge : badges) {
    // One line per badge ("D→H 1.00 KiB · 3 values"); the tooltip lists each value and its size.
    bridge::BorderTransfer total{-1, -1, {}, badge.toDevice, badge.unknown == badge.count ? -1 : badge.knownBytes};
    QString text = total.label();
    if (badge.unknown > 0 && badge.unknown < badge.count) {
      text += QObject::tr(" + %1 of unknown size").arg(badge.unknown);
    }
    if (badge.count > 1) text += QObject::tr(" · %1 values").arg(badge.count);
    QString tip = QObject::tr("Host↔device transfer: copied between host memory and the device at a compiled "
                              "partition's border\n%1").arg(badge.values.join(QLatin1Char('\n')));
    if (badge.unknown > 0) {
      tip += QObject::tr("\n(size unknown: the value's type or a dimension is only known when the model runs)");
    }
    auto* item = new TransferBadgeItem(text, tip);
    // Beside the edge from the producer to the consumer, where it covers nothing: just below the producer first
    // (partition captions sit above nodes), then further along.
    const QRectF a = badge.from->sceneBoundingRect(), b = badge.to->sceneBoundingRect();
    const QPointF from(a.center().x(), a.bottom()), to(b.center().x(), b.top());
    QVector<QPointF> anchors;
    const QPointF below(0, item->size().height() / 2);
    for (double t : {0.25, 0.5, 0.75, 0.1, 0.9}) anchors << from + (to - from) * t + below;
    for (double t : {0.25, 0.5, 0.75}) anchors << from + (to - from) * t + QPointF(item->size().width(), 0);
    // A badge is kept even where every spot covers something: the transfer is the point of the compiled view.
    const QRectF spot = view->placeText(anchors, item->size(), nullptr, true);
    item->setPos(spot.isNull() ? anchors.first() : spot.topLeft());
    view->scene()->addItem(item);
  }
  return static_cast<int>(badges.size());
}

}  // namespace kiln::studio
