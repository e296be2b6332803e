// The scene items GraphView draws: one per node (filled with its EP's color), per collapsed or expanded partition or
// group, per expanded partition's or group's caption and per edge. Each paints itself by level of detail (the view's
// scale): text only where it is legible, a plain box where a node is a few pixels tall. Every text is in scene units,
// so texts placed apart stay apart at any zoom.
#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>
#include <QVector>

#include <functional>

#include "graph_document.h"

namespace kiln::studio {

// Level-of-detail thresholds the items and GraphView share, in screen pixels per scene unit (the view's zoom).
// Below kTextLod a node is a few pixels tall: text and arrowheads are not readable, so they are not drawn.
inline constexpr double kTextLod = 0.55;
// Below kInvisibleEdgeLod edges are thinner than a pixel: they are not drawn.
inline constexpr double kInvisibleEdgeLod = 0.1;
// Node labels' size in scene units at normal zoom (GraphView::readableZoom scales it to the fit threshold).
inline constexpr double kLabelPx = 11;
// A collapsed group's title, in scene units: larger than a node's, so a grouped graph at Fit reads as its groups.
inline constexpr double kGroupTitlePx = 16;
// The smallest on-screen pixel size of a text that is legible: smaller texts are not drawn.
inline constexpr double kLegiblePx = 6.5;

// Item types (QGraphicsItem::type()) of the items that write text, for the view and tests.
inline constexpr int kCaptionItemType = QGraphicsItem::UserType + 4;
inline constexpr int kTransferBadgeItemType = QGraphicsItem::UserType + 5;

// One text an item draws: always whole (a text that would not fit is left out, never cut).
struct ItemLabel {
  QString text;
  QFont font;
  QRectF rect;  // scene coordinates: the box the text is centered in
  // The text's own extent inside `rect`, in scene coordinates.
  QRectF textRect() const;
};

// The EP colors of kiln::bridge::ep_colors as QColor.
QColor epQColor(const QString& executionProvider);

// The looks a node can have that the legend explains, drawn by the code that draws the nodes (paintNodeLook).
enum class NodeLook { FILLED, CPU_FALLBACK, EP_CONTEXT, OUTER_SCOPE };
// A node of `look` filled with `fill`, as GraphNodeItem paints it at full detail, in `rect`.
void paintNodeLook(QPainter* painter, const QRectF& rect, NodeLook look, const QColor& fill);

// One node of the document (an op, a graph input or output).
class GraphNodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  GraphNodeItem(const bridge::GraphNode& node, int index, const QRectF& rect);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int nodeIndex() const { return index_; }
  QColor fillColor() const { return fill_; }
  // Overlay hook (node_overlay.h): repaints the node in `color` (its EP colour, epQColor, restores it).
  void setFillColor(const QColor& color) { fill_ = color; update(); }
  bool isEpContext() const { return epContext_; }
  bool isCpuFallback() const { return fallback_; }
  void setHighlighted(bool on);
  bool isHighlighted() const { return highlighted_; }

  using Label = ItemLabel;
  // What the node shows at scale `lod` (screen pixels per scene unit).
  QVector<Label> labelsAt(double lod) const;
  const QString& title() const { return title_; }
  const QString& subtitle() const { return subtitle_; }

 private:
  void drawLabels(QPainter* painter, double lod) const;

  QRectF rect_;
  int index_;
  QColor fill_;
  QString title_, subtitle_, ioKind_;
  bool epContext_, fallback_, removed_, io_, outer_ = false;
  bool highlighted_ = false;
};

// A partition or a group (graph_groups.h): collapsed, it stands for its nodes; expanded, it is the box drawn behind
// them. clusterIndex() is the partition's or the group's index, as isGroup() says.
class GraphClusterItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };
  GraphClusterItem(const bridge::GraphCluster& cluster, int index, const QRectF& rect, bool collapsed);
  // A group, tinted `fill`; `tooltip` says what it holds.
  GraphClusterItem(const bridge::GraphGroup& group, int index, const QRectF& rect, bool collapsed, const QColor& fill,
                   const QString& tooltip);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int clusterIndex() const { return index_; }
  bool isGroup() const { return group_; }
  bool isCollapsed() const { return collapsed_; }
  QColor fillColor() const { return fill_; }
  const QString& title() const { return title_; }
  // What a collapsed item writes at scale `lod` (nothing for an expanded one: its caption is its own item).
  QVector<ItemLabel> labelsAt(double lod) const;

 private:
  QRectF rect_;
  int index_;
  bool collapsed_;
  bool group_ = false;
  QColor fill_;
  QString title_, subtitle_;
};

class GraphEdgeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };
  // `tensorText`: what the edge carries ("float32[1,3,640,640]"), drawn beside it while tensor shapes are shown.
  GraphEdgeItem(const QVector<QPointF>& spline, const QPointF& arrowTip, int count, const QString& tensorText = {});

  int type() const override { return Type; }
  QRectF boundingRect() const override { return tensorShown_ ? bounds_.united(textRect_) : bounds_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  // Tensor shapes on edges (View ▸ Tensor Shapes on Edges): the text is drawn on a plate of the canvas color at
  // the edge's middle, only where it is legible (tensorTextLegibleAt).
  const QString& tensorText() const { return tensorText_; }
  void setTensorTextShown(bool on);
  bool isTensorTextShown() const { return tensorShown_; }
  // Where `place` puts a box of a size beside one of a list of anchor points (the first free spot, else the one
  // covering least; GraphView::placeText), and whether that spot covers something.
  using TextPlacer = std::function<QRectF(const QVector<QPointF>& anchors, const QSizeF& size, bool* covers)>;
  // Places the text beside the edge (its middle first, then further along) with `place`. Until placed (GraphView
  // places every edge's text when they are first shown), nothing is drawn; where no spot is free, nothing either:
  // a tensor text never covers a node, a caption or another text.
  void placeTensorText(const TextPlacer& place);
  // The text's box in scene coordinates, and its font (a fixed size in scene units).
  QRectF tensorTextRect() const { return textRect_; }
  static QFont tensorTextFont();
  // True when the text is drawn at scale `lod` (screen pixels per scene unit): at least kLegiblePx on screen.
  static bool tensorTextLegibleAt(double lod);

 private:
  QPainterPath path_;
  QPointF start_, end_, tip_;
  QRectF bounds_, textRect_;
  int count_;
  QString tensorText_;
  bool tensorShown_ = false;
};

// An expanded partition's or group's caption on an opaque tab of its tint: drawn above the edges (and below the
// nodes), whole (the layout reserved its width), so an edge never runs through it.
class PartitionCaptionItem : public QGraphicsItem {
 public:
  PartitionCaptionItem(const QString& text, const QRectF& box, const QColor& color);
  int type() const override { return kCaptionItemType; }
  QRectF boundingRect() const override { return rect_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  // True when the caption is drawn at scale `lod`.
  static bool drawnAt(double lod) { return lod >= kTextLod; }

 private:
  QString text_;
  QColor color_;
  QFont font_;
  QRectF rect_;
};

}  // namespace kiln::studio
