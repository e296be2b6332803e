// GraphView: draws a laid-out GraphDocument: one item per node (filled with its EP's color), per collapsed or
// expanded partition and per edge. Wheel zooms around the cursor, dragging the background pans, double-clicking
// a partition asks for it to be collapsed or expanded (the panel re-lays out). Items drop their text and arrows
// when zoomed out (level of detail), which keeps painting a 3000-node graph at fit-to-view cheap.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsView>
#include <QHash>
#include <QSet>

#include <memory>

#include "graph_document.h"
#include "graph_layout.h"

namespace kiln::studio {

// The EP colors of kiln::bridge::ep_colors as QColor.
QColor epQColor(const QString& executionProvider);

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

 private:
  QRectF rect_;
  int index_;
  QColor fill_;
  QString title_, subtitle_;
  bool epContext_, fallback_, removed_, io_;
  bool highlighted_ = false;
};

// A partition: collapsed, it stands for its nodes; expanded, it is the box drawn behind them.
class GraphClusterItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };
  GraphClusterItem(const bridge::GraphCluster& cluster, int index, const QRectF& rect, bool collapsed);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int clusterIndex() const { return index_; }
  bool isCollapsed() const { return collapsed_; }
  QColor fillColor() const { return fill_; }

 private:
  QRectF rect_;
  int index_;
  bool collapsed_;
  QColor fill_;
  QString title_, subtitle_;
};

class GraphEdgeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };
  GraphEdgeItem(const QVector<QPointF>& spline, const QPointF& arrowTip, int count);

  int type() const override { return Type; }
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  QPainterPath path_;
  QPointF start_, end_, tip_;
  QRectF bounds_;
  int count_;
};

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);

  // Replaces the scene's items with the laid-out `graph` of `document`.
  void showGraph(std::shared_ptr<const bridge::GraphDocument> document, const bridge::VisibleGraph& graph,
                 const bridge::GraphLayoutResult& layout, const QSet<int>& collapsed);
  void clearGraph();

  GraphNodeItem* nodeItem(int node) const { return nodeItems_.value(node); }
  GraphClusterItem* clusterItem(int cluster) const { return clusterItems_.value(cluster); }
  const QHash<int, GraphNodeItem*>& nodeItems() const { return nodeItems_; }
  // Selects node `node` (or the collapsed partition holding it) and centers the view on it.
  void focusNode(int node);
  void setHighlighted(const QVector<int>& nodes);

  void fitAll();
  void zoomBy(double factor);
  double zoom() const { return transform().m11(); }

 signals:
  void nodeSelected(int node);
  void clusterSelected(int cluster);
  void selectionCleared();
  void clusterToggleRequested(int cluster);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void onSelectionChanged();

  QGraphicsScene* scene_;
  std::shared_ptr<const bridge::GraphDocument> document_;
  QHash<int, GraphNodeItem*> nodeItems_;
  QHash<int, GraphClusterItem*> clusterItems_;
  QVector<int> highlighted_;
};

}  // namespace kiln::studio
