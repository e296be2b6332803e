#include "graph_view.h"

#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>

namespace kiln::studio {

namespace {

// Below this scale a node is a few pixels tall: text and arrowheads are not readable, so they are not drawn.
constexpr double kTextLod = 0.55;
constexpr double kDetailLod = 0.3;

const QColor kFallbackPen(0xc0, 0x20, 0x20);
const QColor kEpContextPen(0x20, 0x20, 0x20);

QColor fromRgb(uint32_t rgb) { return QColor::fromRgb(static_cast<QRgb>(rgb)); }

double lodOf(const QStyleOptionGraphicsItem* option, const QPainter* painter) {
  return option->levelOfDetailFromTransform(painter->worldTransform());
}

}  // namespace

QColor epQColor(const QString& executionProvider) { return fromRgb(bridge::epColor(executionProvider)); }

// ----- nodes -----

GraphNodeItem::GraphNodeItem(const bridge::GraphNode& node, int index, const QRectF& rect)
    : rect_(rect),
      index_(index),
      epContext_(node.epContext),
      fallback_(node.cpuFallback()),
      removed_(node.removedByOptimizer),
      io_(node.kind != bridge::GraphNode::Kind::Op) {
  setFlag(ItemIsSelectable);
  setAcceptHoverEvents(false);
  fill_ = io_ ? fromRgb(bridge::ep_colors::kGraphIo) : epQColor(node.executionProvider);
  if (io_) {
    title_ = node.name;
  } else {
    title_ = epContext_ ? QStringLiteral("EPContext") : node.opType;
    subtitle_ = node.displayName();
  }
  if (fallback_) title_ = QStringLiteral("\u26a0 ") + title_;
  QString tip = node.label;
  if (!node.executionProvider.isEmpty()) tip += QStringLiteral("\n") + bridge::epShortName(node.executionProvider);
  if (!node.partition.isEmpty()) tip += QStringLiteral(" (%1)").arg(node.partition);
  const QString why = node.cpuFallback() ? QStringLiteral("\nfallback: ") : QStringLiteral("\non the CPU by design: ");
  for (const QString& reason : node.fallbackReasons) tip += why + reason;
  if (removed_) tip += QStringLiteral("\n") + node.optimizerNote;
  setToolTip(tip);
  setZValue(2);
}

QRectF GraphNodeItem::boundingRect() const { return rect_.adjusted(-3, -3, 3, 3); }

void GraphNodeItem::setHighlighted(bool on) {
  if (highlighted_ == on) return;
  highlighted_ = on;
  update();
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = lodOf(option, painter);
  const bool selected = isSelected();
  if (lod < kDetailLod) {
    // A colored block is all a node can show at this scale; markers survive as the block's color edge.
    painter->fillRect(rect_, selected || highlighted_ ? QColor(Qt::yellow) : fill_);
    if (fallback_ || epContext_) {
      painter->fillRect(QRectF(rect_.left(), rect_.top(), rect_.width(), rect_.height() / 4),
                        fallback_ ? kFallbackPen : kEpContextPen);
    }
    return;
  }
  QPen pen(QColor(0x40, 0x40, 0x40), 1);
  if (fallback_) pen = QPen(kFallbackPen, 2.5, Qt::DashLine);
  if (removed_) pen = QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DotLine);
  if (selected) pen = QPen(QColor(0x10, 0x60, 0xff), 3);
  painter->setPen(pen);
  QColor fill = fill_;
  if (removed_) fill.setAlpha(110);
  painter->setBrush(highlighted_ ? fill.lighter(130) : fill);
  if (io_) {
    painter->drawRoundedRect(rect_, rect_.height() / 2, rect_.height() / 2);
  } else if (epContext_) {
    // EPContext nodes: a hexagon with a double border, unlike any op box.
    const double inset = std::min(12.0, rect_.width() / 6);
    QPolygonF hex;
    hex << QPointF(rect_.left() + inset, rect_.top()) << QPointF(rect_.right() - inset, rect_.top())
        << QPointF(rect_.right(), rect_.center().y()) << QPointF(rect_.right() - inset, rect_.bottom())
        << QPointF(rect_.left() + inset, rect_.bottom()) << QPointF(rect_.left(), rect_.center().y());
    if (!selected) painter->setPen(QPen(kEpContextPen, 3));
    painter->drawPolygon(hex);
    painter->setPen(QPen(Qt::white, 1));
    painter->setBrush(Qt::NoBrush);
    QPolygonF inner;
    for (const QPointF& p : hex) inner << rect_.center() + (p - rect_.center()) * 0.88;
    painter->drawPolygon(inner);
  } else {
    painter->drawRoundedRect(rect_, 4, 4);
  }
  if (highlighted_) {
    painter->setPen(QPen(QColor(0xff, 0xc0, 0x00), 3));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(rect_.adjusted(-2, -2, 2, 2), 5, 5);
  }
  if (lod < kTextLod) return;
  painter->setPen(Qt::black);
  QFont font = painter->font();
  font.setPointSizeF(8);
  if (subtitle_.isEmpty()) {
    painter->setFont(font);
    painter->drawText(rect_, Qt::AlignCenter, QFontMetricsF(font).elidedText(title_, Qt::ElideMiddle, rect_.width() - 8));
    return;
  }
  QFont bold = font;
  bold.setBold(true);
  const QRectF top(rect_.left() + 4, rect_.top() + 2, rect_.width() - 8, rect_.height() / 2 - 2);
  const QRectF bottom(rect_.left() + 4, rect_.center().y(), rect_.width() - 8, rect_.height() / 2 - 2);
  painter->setFont(bold);
  painter->drawText(top, Qt::AlignCenter, QFontMetricsF(bold).elidedText(title_, Qt::ElideRight, top.width()));
  painter->setFont(font);
  painter->drawText(bottom, Qt::AlignCenter,
                    QFontMetricsF(font).elidedText(subtitle_, Qt::ElideMiddle, bottom.width()));
}

// ----- partitions -----

GraphClusterItem::GraphClusterItem(const bridge::GraphCluster& cluster, int index, const QRectF& rect, bool collapsed)
    : rect_(rect), index_(index), collapsed_(collapsed), fill_(epQColor(cluster.executionProvider)) {
  setFlag(ItemIsSelectable, collapsed);
  title_ = QStringLiteral("%1 \u00b7 %2").arg(cluster.name, bridge::epShortName(cluster.executionProvider));
  subtitle_ = QObject::tr("%n node(s)", nullptr, static_cast<int>(cluster.nodes.size()));
  setToolTip(collapsed ? QObject::tr("%1, %2: double-click to expand").arg(title_, subtitle_)
                       : QObject::tr("%1, %2: double-click the frame to collapse").arg(title_, subtitle_));
  setZValue(collapsed ? 2 : 0);
}

QRectF GraphClusterItem::boundingRect() const { return rect_.adjusted(-4, -4, 4, 4); }

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = lodOf(option, painter);
  if (collapsed_) {
    if (lod < kDetailLod) {
      painter->fillRect(rect_, isSelected() ? QColor(Qt::yellow) : fill_);
      return;
    }
    // A stack of two boxes reads as "several nodes in here".
    painter->setPen(QPen(QColor(0x30, 0x30, 0x30), 1.5));
    painter->setBrush(fill_.lighter(115));
    painter->drawRoundedRect(rect_.translated(4, -4).adjusted(0, 0, -4, 4), 6, 6);
    painter->setPen(isSelected() ? QPen(QColor(0x10, 0x60, 0xff), 3) : QPen(QColor(0x30, 0x30, 0x30), 2));
    painter->setBrush(fill_);
    painter->drawRoundedRect(rect_.adjusted(0, 4, -4, 0), 6, 6);
    if (lod < kTextLod) return;
    QFont font = painter->font();
    font.setPointSizeF(9);
    font.setBold(true);
    painter->setFont(font);
    painter->setPen(Qt::black);
    const QRectF inner = rect_.adjusted(4, 6, -8, -2);
    painter->drawText(QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2), Qt::AlignCenter, title_);
    font.setBold(false);
    painter->setFont(font);
    painter->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2), Qt::AlignCenter,
                      subtitle_);
    return;
  }
  QColor back = fill_;
  back.setAlpha(40);
  painter->setBrush(back);
  painter->setPen(QPen(fill_.darker(130), 1.5, Qt::DashLine));
  painter->drawRoundedRect(rect_, 8, 8);
  if (lod < kTextLod) return;
  QFont font = painter->font();
  font.setPointSizeF(9);
  font.setBold(true);
  painter->setFont(font);
  painter->setPen(fill_.darker(170));
  painter->drawText(rect_.adjusted(8, 4, -8, 0), Qt::AlignTop | Qt::AlignLeft,
                    QStringLiteral("%1 (%2)").arg(title_, subtitle_));
}

// ----- edges -----

GraphEdgeItem::GraphEdgeItem(const QVector<QPointF>& spline, const QPointF& arrowTip, int count)
    : tip_(arrowTip), count_(count) {
  if (!spline.isEmpty()) {
    path_.moveTo(spline.first());
    int i = 1;
    for (; i + 2 < spline.size(); i += 3) path_.cubicTo(spline[i], spline[i + 1], spline[i + 2]);
    for (; i < spline.size(); ++i) path_.lineTo(spline[i]);
    start_ = spline.first();
    end_ = spline.last();
  }
  if (!tip_.isNull()) path_.lineTo(tip_);
  bounds_ = path_.boundingRect().adjusted(-6, -6, 6, 6);
  setZValue(1);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = lodOf(option, painter);
  painter->setPen(QPen(QColor(0x50, 0x50, 0x50), count_ > 1 ? 2.0 : 1.0));
  if (lod < kDetailLod) {
    painter->drawLine(start_, tip_.isNull() ? end_ : tip_);
    return;
  }
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  if (tip_.isNull() || lod < kTextLod) return;
  // The arrowhead: dot leaves a gap between the spline's end and the tip for it.
  const QPointF direction = tip_ - end_;
  const double length = std::hypot(direction.x(), direction.y());
  if (length < 0.1) return;
  const QPointF unit = direction / length, normal(-unit.y(), unit.x());
  QPolygonF head;
  head << tip_ << tip_ - unit * 8 + normal * 3.5 << tip_ - unit * 8 - normal * 3.5;
  painter->setBrush(QColor(0x50, 0x50, 0x50));
  painter->drawPolygon(head);
}

// ----- view -----

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), scene_(new QGraphicsScene(this)) {
  setScene(scene_);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setViewportUpdateMode(SmartViewportUpdate);
  setBackgroundBrush(Qt::white);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

void GraphView::clearGraph() {
  nodeItems_.clear();
  clusterItems_.clear();
  highlighted_.clear();
  scene_->clear();
  document_.reset();
}

void GraphView::showGraph(std::shared_ptr<const bridge::GraphDocument> document, const bridge::VisibleGraph& graph,
                          const bridge::GraphLayoutResult& layout, const QSet<int>& collapsed) {
  const QSignalBlocker blocker(scene_);  // clearing the scene must not announce an empty selection
  clearGraph();
  document_ = std::move(document);
  for (int i = 0; i < graph.vertices.size(); ++i) {
    const bridge::VisibleGraph::Vertex& v = graph.vertices[i];
    if (v.node >= 0) {
      auto* item = new GraphNodeItem(document_->nodes()[v.node], v.node, layout.vertices[i]);
      scene_->addItem(item);
      nodeItems_.insert(v.node, item);
    } else if (v.cluster >= 0) {
      auto* item = new GraphClusterItem(document_->clusters()[v.cluster], v.cluster, layout.vertices[i], true);
      scene_->addItem(item);
      clusterItems_.insert(v.cluster, item);
    }
  }
  for (auto it = layout.clusterBoxes.constBegin(); it != layout.clusterBoxes.constEnd(); ++it) {
    if (collapsed.contains(it.key()) || it.key() < 0 || it.key() >= document_->clusters().size()) continue;
    auto* item = new GraphClusterItem(document_->clusters()[it.key()], it.key(), it.value(), false);
    scene_->addItem(item);
    clusterItems_.insert(it.key(), item);
  }
  for (int i = 0; i < graph.edges.size(); ++i) {
    scene_->addItem(new GraphEdgeItem(layout.edgeSplines[i], layout.edgeArrowTips[i], graph.edges[i].count));
  }
  scene_->setSceneRect(layout.bounds.adjusted(-20, -20, 20, 20));
}

void GraphView::fitAll() {
  if (!scene_->sceneRect().isEmpty()) fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
}

void GraphView::zoomBy(double factor) {
  const double next = zoom() * factor;
  if (next < 0.005 || next > 8) return;  // beyond these the graph is a dot or one letter fills the view
  scale(factor, factor);
}

void GraphView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  zoomBy(std::pow(1.2, steps));
  event->accept();
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  for (QGraphicsItem* item : items(event->position().toPoint())) {
    if (item->type() == GraphNodeItem::Type) {  // double-clicking a node inside a partition is not a toggle
      emit nodeActivated(static_cast<GraphNodeItem*>(item)->nodeIndex());
      event->accept();
      return;
    }
    if (item->type() == GraphClusterItem::Type) {
      emit clusterToggleRequested(static_cast<GraphClusterItem*>(item)->clusterIndex());
      event->accept();
      return;
    }
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::focusNode(int node) {
  if (document_) node = document_->drawnNode(node);
  QGraphicsItem* item = nodeItems_.value(node);
  if (!item && document_) item = clusterItems_.value(document_->clusterOf(node));
  if (!item) return;
  scene_->clearSelection();
  item->setSelected(true);
  // Zoom in far enough to read the node when the view shows the whole big graph.
  if (zoom() < kTextLod) zoomBy(0.9 / zoom());
  centerOn(item);
}

void GraphView::setHighlighted(const QVector<int>& nodes) {
  for (int node : highlighted_) {
    if (auto* item = nodeItems_.value(node)) item->setHighlighted(false);
  }
  highlighted_ = nodes;
  for (int node : highlighted_) {
    if (auto* item = nodeItems_.value(node)) item->setHighlighted(true);
  }
}

void GraphView::onSelectionChanged() {
  const QList<QGraphicsItem*> selected = scene_->selectedItems();
  if (selected.isEmpty()) {
    emit selectionCleared();
    return;
  }
  QGraphicsItem* item = selected.first();
  if (item->type() == GraphNodeItem::Type) emit nodeSelected(static_cast<GraphNodeItem*>(item)->nodeIndex());
  if (item->type() == GraphClusterItem::Type) emit clusterSelected(static_cast<GraphClusterItem*>(item)->clusterIndex());
}

}  // namespace kiln::studio
