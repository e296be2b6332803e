#include "source_compiled_link.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHash>
#include <QPainter>
#include <QPalette>

#include "graph_panel.h"
#include "graph_view.h"
#include "source_compiled_links.h"

namespace kiln::studio {

namespace {

// A small label on an edge: the values crossing host↔device there and their sizes.
class TransferBadgeItem : public QGraphicsItem {
 public:
  TransferBadgeItem(const QString& text, const QString& tooltip) : text_(text) {
    setToolTip(tooltip);
    setZValue(20);  // above edges and nodes
    // The same size on screen at any zoom: it fits the gap below its producer and never hides whole nodes.
    setFlag(ItemIgnoresTransformations);
    const QFontMetricsF metrics(font());
    bounds_ = metrics.boundingRect(QRectF(0, 0, 400, 200), Qt::AlignCenter, text_).adjusted(-4, -2, 4, 2);
    bounds_.moveCenter(QPointF(0, 0));
    bounds_.moveTop(1);  // hangs just below the point it is placed at
  }
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    // Fixed colors on their own background: readable on the light and the dark theme alike.
    painter->setPen(QPen(QColor(0x8a, 0x6d, 0x1e), 1));
    painter->setBrush(QColor(0xff, 0xf4, 0xc8));
    painter->drawRoundedRect(bounds_, 3, 3);
    painter->setFont(font());
    painter->setPen(QColor(0x3a, 0x2c, 0x00));
    painter->drawText(bounds_, Qt::AlignCenter, text_);
  }

 private:
  static QFont font() { return QApplication::font(); }
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
    QGraphicsItem* item = panel->view()->nodeItem(node);
    if (!item) item = panel->view()->clusterItem(panel->document()->clusterOf(node));
    if (item) area = area.united(item->sceneBoundingRect());
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
  auto drawn = [&](int node) -> QGraphicsItem* {
    if (QGraphicsItem* item = view->nodeItem(document.drawnNode(node))) return item;
    return view->clusterItem(document.clusterOf(node));
  };
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
    // Hanging just below the producer, a quarter of the way toward the consumer: partition captions sit above
    // nodes, so the midpoint of an edge into a partition would cover its caption.
    const QRectF a = badge.from->sceneBoundingRect(), b = badge.to->sceneBoundingRect();
    // One line per badge ("D→H 1.00 KiB · 3 values"); the tooltip lists each value and its size.
    bridge::BorderTransfer total{-1, -1, {}, badge.toDevice, badge.unknown == badge.count ? -1 : badge.knownBytes};
    QString text = total.label();
    if (badge.unknown > 0 && badge.unknown < badge.count) text += QStringLiteral(" + ?");
    if (badge.count > 1) text += QObject::tr(" · %1 values").arg(badge.count);
    auto* item = new TransferBadgeItem(text,
                                       QObject::tr("Host↔device transfer\n%1").arg(badge.values.join(QLatin1Char('\n'))));
    const double x = a.center().x() + (b.center().x() - a.center().x()) / 4;
    item->setPos(x, a.bottom());
    view->scene()->addItem(item);
  }
  return static_cast<int>(badges.size());
}

}  // namespace kiln::studio
