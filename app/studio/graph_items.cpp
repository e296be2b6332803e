#include "graph_items.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

#include "theme.h"

namespace kiln::studio {

namespace {

// kTextLod, kInvisibleEdgeLod and kLabelPx, shared with the view, are in graph_items.h.
constexpr double kDetailLod = 0.3;  // below it, nodes and partitions are plain boxes
// Tensor text on edges: its size in scene units.
constexpr double kEdgeTextPx = 10;

const QColor kFallbackPen(0xc0, 0x20, 0x20);
constexpr uint32_t kOuterScopeFill = 0xe6e0f4;  // pale violet: outer-scope values in a body
const QColor kEpContextPen(0x20, 0x20, 0x20);

QColor fromRgb(uint32_t rgb) { return QColor::fromRgb(static_cast<QRgb>(rgb)); }

// EPContext nodes: a hexagon with a double border (`pen` outside, a white line inside), unlike any op box.
void drawEpContextHexagon(QPainter* painter, const QRectF& rect, const QPen& pen) {
  const double inset = std::min(12.0, rect.width() / 6);
  QPolygonF hex;
  hex << QPointF(rect.left() + inset, rect.top()) << QPointF(rect.right() - inset, rect.top())
      << QPointF(rect.right(), rect.center().y()) << QPointF(rect.right() - inset, rect.bottom())
      << QPointF(rect.left() + inset, rect.bottom()) << QPointF(rect.left(), rect.center().y());
  painter->setPen(pen);
  painter->drawPolygon(hex);
  painter->setPen(QPen(Qt::white, 1));
  painter->setBrush(Qt::NoBrush);
  QPolygonF inner;
  for (const QPointF& p : hex) inner << rect.center() + (p - rect.center()) * 0.88;
  painter->drawPolygon(inner);
}

QPen fallbackPen() { return QPen(kFallbackPen, 2.5, Qt::DashLine); }
QPen outerScopePen() { return QPen(QColor(0x60, 0x50, 0x90), 1.5, Qt::DashLine); }

double lodOf(const QStyleOptionGraphicsItem* option, const QPainter* painter) {
  return option->levelOfDetailFromTransform(painter->worldTransform());
}

}  // namespace

void paintNodeLook(QPainter* painter, const QRectF& rect, NodeLook look, const QColor& fill) {
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing, true);
  painter->setBrush(fill);
  switch (look) {
    case NodeLook::FILLED:
      painter->setPen(QPen(QColor(0x40, 0x40, 0x40), 1));
      painter->drawRoundedRect(rect, 3, 3);
      break;
    case NodeLook::CPU_FALLBACK:
      painter->setPen(fallbackPen());
      painter->drawRoundedRect(rect, 3, 3);
      break;
    case NodeLook::EP_CONTEXT: drawEpContextHexagon(painter, rect, QPen(kEpContextPen, 3)); break;
    case NodeLook::OUTER_SCOPE:
      painter->setPen(outerScopePen());
      painter->setBrush(fromRgb(kOuterScopeFill));
      painter->drawRoundedRect(rect, rect.height() / 2, rect.height() / 2);
      break;
  }
  painter->restore();
}

QColor epQColor(const QString& executionProvider) { return fromRgb(bridge::epColor(executionProvider)); }

QRectF ItemLabel::textRect() const {
  return QFontMetricsF(font).boundingRect(rect, Qt::AlignCenter | Qt::TextDontClip, text);
}

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
  outer_ = node.outerScope;
  fill_ = io_ ? fromRgb(outer_ ? kOuterScopeFill : bridge::ep_colors::kGraphIo) : epQColor(node.executionProvider);
  if (io_) {
    title_ = node.name;
    ioKind_ = node.opType;  // "input", "output", "outer scope": shown when the name does not fit
  } else {
    title_ = epContext_ ? QStringLiteral("EPContext") : node.opType;
    subtitle_ = node.displayName();
  }
  if (fallback_) title_ = QStringLiteral("\u26a0 ") + title_;
  QString tip = node.outerScope ? QObject::tr("%1: a value of an enclosing graph, read by this body").arg(node.name)
                                : node.label;
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
    // A colored block is all a node can show at this scale; markers survive as the block's color edge, and the op
    // type when it is still legible. No antialiasing for a block of a few pixels: it is the costly part of painting
    // ten thousand of them, and the view's next paint starts with its own hints again.
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(rect_, selected || highlighted_ ? QColor(Qt::yellow) : fill_);
    if (fallback_ || epContext_) {
      painter->fillRect(QRectF(rect_.left(), rect_.top(), rect_.width(), rect_.height() / 4),
                        fallback_ ? kFallbackPen : kEpContextPen);
    }
    drawLabels(painter, lod);
    return;
  }
  QPen pen(QColor(0x40, 0x40, 0x40), 1);
  if (fallback_) pen = fallbackPen();
  if (removed_) pen = QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DotLine);
  if (selected) pen = QPen(QColor(0x10, 0x60, 0xff), 3);
  painter->setPen(pen);
  QColor fill = fill_;
  if (removed_) fill.setAlpha(110);
  painter->setBrush(highlighted_ ? fill.lighter(130) : fill);
  if (io_) {
    // A value of an enclosing graph, read by this body: dashed, so it never passes for a graph input.
    if (outer_ && !selected) painter->setPen(outerScopePen());
    painter->drawRoundedRect(rect_, rect_.height() / 2, rect_.height() / 2);
  } else if (epContext_) {
    drawEpContextHexagon(painter, rect_, selected ? painter->pen() : QPen(kEpContextPen, 3));
  } else {
    painter->drawRoundedRect(rect_, 4, 4);
  }
  if (highlighted_) {
    painter->setPen(QPen(QColor(0xff, 0xc0, 0x00), 3));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(rect_.adjusted(-2, -2, 2, 2), 5, 5);
  }
  drawLabels(painter, lod);
}

void GraphNodeItem::drawLabels(QPainter* painter, double lod) const {
  const QVector<Label> labels = labelsAt(lod);
  if (labels.isEmpty()) return;
  painter->setPen(Qt::black);
  for (const Label& label : labels) {
    painter->setFont(label.font);
    painter->drawText(label.rect, Qt::AlignCenter | Qt::TextDontClip, label.text);
  }
}

QVector<GraphNodeItem::Label> GraphNodeItem::labelsAt(double lod) const {
  QVector<Label> labels;
  const QRectF inner = rect_.adjusted(4, 2, -4, -2);
  // At this scale the largest text the box holds is still too small to read: no label at all.
  if (inner.height() * 0.6 * lod < kLegiblePx) return labels;
  auto fits = [](const QFont& font, const QString& text, const QRectF& box) {
    const QFontMetricsF metrics(font);
    return metrics.horizontalAdvance(text) <= box.width() && metrics.height() <= box.height() + 1;
  };
  QFont bold;
  bold.setBold(true);
  if (kLabelPx * lod >= kLegiblePx) {
    // Close enough for the regular size: the op type and, when it fits whole, the name below it.
    bold.setPixelSize(static_cast<int>(kLabelPx));
    QFont regular = bold;
    regular.setBold(false);
    const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() / 2);
    const QRectF bottom(inner.left(), inner.center().y(), inner.width(), inner.height() / 2);
    if (!subtitle_.isEmpty() && fits(bold, title_, top) && fits(regular, subtitle_, bottom)) {
      labels.push_back({title_, bold, top});
      labels.push_back({subtitle_, regular, bottom});
      return labels;
    }
    if (fits(bold, title_, inner)) {
      labels.push_back({title_, bold, inner});
    } else if (!ioKind_.isEmpty() && fits(regular, ioKind_, inner)) {
      labels.push_back({ioKind_, regular, inner});
    }
    return labels;
  }
  // Zoomed out: the op type alone, drawn larger in the scene so that it stays legible on screen.
  const double px = std::min(inner.height() * 0.6, kLegiblePx * 1.15 / lod);
  bold.setPixelSize(std::max(1, static_cast<int>(px)));
  if (fits(bold, title_, inner)) labels.push_back({title_, bold, inner});
  return labels;
}

// ----- partitions -----

GraphClusterItem::GraphClusterItem(const bridge::GraphCluster& cluster, int index, const QRectF& rect, bool collapsed)
    : rect_(rect), index_(index), collapsed_(collapsed), fill_(epQColor(cluster.executionProvider)) {
  setFlag(ItemIsSelectable, collapsed);
  title_ = cluster.title();
  subtitle_ = cluster.nodeCountText();
  setToolTip(collapsed ? QObject::tr("%1, %2: double-click to expand").arg(title_, subtitle_)
                       : QObject::tr("%1, %2: double-click the frame to collapse").arg(title_, subtitle_));
  setZValue(collapsed ? 2 : 0);
}

GraphClusterItem::GraphClusterItem(const bridge::GraphGroup& group, int index, const QRectF& rect, bool collapsed,
                                   const QColor& fill, const QString& tooltip)
    : rect_(rect), index_(index), collapsed_(collapsed), group_(true), fill_(fill) {
  setFlag(ItemIsSelectable, collapsed);
  title_ = group.title;
  subtitle_ = group.subtitle();
  setToolTip(tooltip + (collapsed ? QObject::tr("\nDouble-click to expand")
                                  : QObject::tr("\nDouble-click the frame to collapse")));
  setZValue(collapsed ? 2 : 0.5);  // an expanded group's frame lies inside its partition's
}

QRectF GraphClusterItem::boundingRect() const { return rect_.adjusted(-4, -4, 4, 4); }

QVector<ItemLabel> GraphClusterItem::labelsAt(double lod) const {
  QVector<ItemLabel> labels;
  if (!collapsed_) return labels;
  // Partitions: their title at the nodes' size once text is drawn at all; groups: a title larger than a node's,
  // so a grouped graph at Fit reads as its groups.
  const double titlePx = group_ ? kGroupTitlePx : 12;
  if (titlePx * lod < kLegiblePx || (!group_ && lod < kTextLod)) return labels;
  QFont bold;
  bold.setPixelSize(static_cast<int>(titlePx));
  bold.setBold(true);
  QFont regular = bold;
  regular.setBold(false);
  regular.setPixelSize(group_ ? 11 : 12);
  const QRectF inner = rect_.adjusted(6, 6, -10, -2);  // the stack's front box, less its border
  const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() * 0.55);
  const QRectF bottom(inner.left(), top.bottom(), inner.width(), inner.height() - top.height());
  const QFontMetricsF titleMetrics(bold), subtitleMetrics(regular);
  labels.push_back({titleMetrics.elidedText(title_, Qt::ElideMiddle, top.width()), bold, top});
  if (subtitleMetrics.horizontalAdvance(subtitle_) <= bottom.width() && regular.pixelSize() * lod >= kLegiblePx) {
    labels.push_back({subtitle_, regular, bottom});
  }
  return labels;
}

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = lodOf(option, painter);
  if (collapsed_) {
    if (lod < kDetailLod && !group_) {
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
    painter->setPen(Qt::black);
    for (const ItemLabel& label : labelsAt(lod)) {
      painter->setFont(label.font);
      painter->drawText(label.rect, Qt::AlignCenter, label.text);
    }
    return;
  }
  QColor back = fill_;
  back.setAlpha(group_ ? 25 : 40);
  if (lod < kDetailLod) {
    // Far out a dashed, antialiased outline costs more than all the nodes inside: a tinted area says enough.
    painter->fillRect(rect_, back);
    return;
  }
  painter->setBrush(back);
  painter->setPen(QPen(fill_.darker(group_ ? 160 : 130), group_ ? 1 : 1.5, group_ ? Qt::DotLine : Qt::DashLine));
  painter->drawRoundedRect(rect_, 8, 8);
  // The caption is its own item (PartitionCaptionItem), above the edges, so no edge crosses its text.
}

// ----- partition captions -----

PartitionCaptionItem::PartitionCaptionItem(const QString& text, const QRectF& box, const QColor& color)
    : text_(text), color_(color) {
  font_.setPointSizeF(9);
  font_.setBold(true);
  const QFontMetricsF metrics(font_);
  rect_ = QRectF(box.left() + 6, box.top() + 3, metrics.horizontalAdvance(text) + 6, metrics.height() + 2);
  setZValue(1.5);
}

void PartitionCaptionItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  if (lodOf(option, painter) < kTextLod) return;
  QColor back = color_;
  back.setAlpha(40);
  painter->fillRect(rect_, Qt::white);
  painter->fillRect(rect_, back);
  painter->setFont(font_);
  painter->setPen(color_.darker(170));
  painter->drawText(rect_, Qt::AlignCenter | Qt::TextDontClip, text_);
}

// ----- edges -----

GraphEdgeItem::GraphEdgeItem(const QVector<QPointF>& spline, const QPointF& arrowTip, int count,
                             const QString& tensorText)
    : tip_(arrowTip), count_(count), tensorText_(tensorText) {
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

void GraphEdgeItem::placeTensorText(const TextPlacer& place) {
  if (tensorText_.isEmpty()) return;
  // Beside the edge (edges run top to bottom): at its middle, unless something is there already.
  const QFontMetricsF metrics(tensorTextFont());
  const QSizeF size(metrics.horizontalAdvance(tensorText_) + 4, metrics.height());
  QVector<QPointF> anchors;
  for (double percent : {0.5, 0.7, 0.3, 0.85, 0.15}) anchors << path_.pointAtPercent(percent);
  prepareGeometryChange();
  bool covers = false;
  textRect_ = place(anchors, size, &covers);
  // Where every spot near the edge is taken, the text is left out (the node details and the edge's consumer
  // still say it) rather than drawn over another.
  if (covers) textRect_ = QRectF();
}

QFont GraphEdgeItem::tensorTextFont() {
  QFont font;
  font.setPixelSize(static_cast<int>(kEdgeTextPx));
  return font;
}

bool GraphEdgeItem::tensorTextLegibleAt(double lod) { return kEdgeTextPx * lod >= kLegiblePx; }

void GraphEdgeItem::setTensorTextShown(bool on) {
  on = on && !tensorText_.isEmpty();
  if (on == tensorShown_) return;
  prepareGeometryChange();
  tensorShown_ = on;
  update();
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = lodOf(option, painter);
  // A ten-thousand-node graph at fit: an edge is a fraction of a pixel next to the nodes it joins.
  if (lod < kInvisibleEdgeLod) return;
  painter->setPen(QPen(graphEdgeColor(), count_ > 1 ? 2.0 : 1.0));
  if (lod < kDetailLod) {
    painter->drawLine(start_, tip_.isNull() ? end_ : tip_);
    return;
  }
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  if (tensorShown_ && !textRect_.isEmpty() && tensorTextLegibleAt(lod)) {
    // A plate of the canvas color keeps the text legible over other edges, in either theme.
    const QColor canvas = graphCanvasColor();
    QColor plate = canvas;
    plate.setAlpha(225);
    painter->fillRect(textRect_, plate);
    painter->setFont(tensorTextFont());
    painter->setPen(canvas.lightness() < 128 ? QColor(0xe6, 0xe6, 0xe6) : QColor(0x20, 0x20, 0x20));
    painter->drawText(textRect_, Qt::AlignCenter | Qt::TextDontClip, tensorText_);
    painter->setPen(QPen(graphEdgeColor(), count_ > 1 ? 2.0 : 1.0));
  }
  if (tip_.isNull() || lod < kTextLod) return;
  // The arrowhead: dot leaves a gap between the spline's end and the tip for it.
  const QPointF direction = tip_ - end_;
  const double length = std::hypot(direction.x(), direction.y());
  if (length < 0.1) return;
  const QPointF unit = direction / length, normal(-unit.y(), unit.x());
  QPolygonF head;
  head << tip_ << tip_ - unit * 8 + normal * 3.5 << tip_ - unit * 8 - normal * 3.5;
  painter->setBrush(graphEdgeColor());
  painter->drawPolygon(head);
}

}  // namespace kiln::studio
