// GraphView: draws a laid-out GraphDocument: one item per node (filled with its EP's color), per collapsed or
// expanded partition and per edge. Wheel zooms around the cursor, dragging the background pans, double-clicking
// a partition asks for it to be collapsed or expanded (the panel re-lays out). Keys: + and - (with or without
// Ctrl) zoom, Ctrl+0 fits (never so far out that labels are illegible: fitReadable); arrow keys and Tab walk from
// the selected node along its edges. A minimap in the corner shows where the view is while zoomed in; clicking it
// moves there. Labels follow the zoom (level of detail): name and op type when both fit, the op type alone when
// the name does not, nothing when no text would be legible; a label is never cut. Edges can carry their tensor's
// dtype and shape (setTensorShapesShown). Painting a 10,000-node graph at fit-to-view stays cheap.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsView>
#include <QFont>
#include <QHash>
#include <QImage>
#include <QPixmap>
#include <QSet>
#include <QWidget>

#include <functional>
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

  // One text the node draws: always whole (a text that would not fit is left out, never cut).
  struct Label {
    QString text;
    QFont font;
    QRectF rect;  // scene coordinates
  };
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
  // Places the text beside the edge (right, then left of it; its middle first, then further along) at the first
  // spot where `cost` is 0, else where it is least. Until placed (GraphView places every edge's text when they are
  // first shown), nothing is drawn. A text placed over something is drawn above the nodes, so it is never hidden.
  void placeTensorText(const std::function<double(const QRectF&)>& cost);
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
  bool textCovers_ = false;  // no free spot: the text lies over a node, a caption or another text
};

class GraphView;

// The overview in the view's corner: the whole graph (a picture drawn once per layout) and the visible area.
class GraphMinimap : public QWidget {
  Q_OBJECT

 public:
  explicit GraphMinimap(GraphView* view);
  // Redraws the picture of the scene (after a layout).
  void refresh();
  // The visible area in the minimap's coordinates (for tests).
  QRectF viewportFrame() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  QPointF toScene(const QPointF& point) const;
  QRectF picturedRect() const;  // where the picture sits inside the widget

  GraphView* view_;
  QPixmap picture_;
};

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

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

  // The smallest on-screen size, in pixels, of a node's op-type label at Fit: the one legibility threshold of Fit.
  static constexpr double kFitLabelPx = 8;
  // The scale at which node labels are kFitLabelPx on screen: Fit never zooms out below it.
  static double readableZoom();
  // Fit (the Fit button, Ctrl+0, a graph just laid out): the whole graph when its labels stay legible at that
  // scale; otherwise readableZoom(), showing the graph's top (its first nodes), the rest a scroll, a zoom-out or
  // the minimap away. Kept on resize.
  void fitReadable();
  // The whole graph in the view at whatever scale that takes (tests, benchmarks, exports). Kept on resize.
  void fitAll();
  void zoomBy(double factor);
  double zoom() const { return transform().m11(); }
  GraphMinimap* minimap() const { return minimap_; }
  // Shows every edge (for an export, drawn at its own scale); updateLevelOfDetail() hides them again where the
  // view's zoom makes them thinner than a pixel.
  void showAllEdges();
  void updateLevelOfDetail();
  bool edgesShown() const { return edgesShown_; }
  // Tensor dtype and shape drawn on every edge (GraphEdgeItem::tensorText); kept across layouts and models.
  void setTensorShapesShown(bool on);
  bool tensorShapesShown() const { return tensorShapesShown_; }
  const QVector<QGraphicsItem*>& edgeItems() const { return edgeItems_; }
  // True while a huge graph far out is drawn as one cached picture.
  bool isOverview() const { return overview_; }
  // The drawn node selected now, or -1.
  int selectedNode() const;
  // Moves the selection along the edges: the first consumer (+1 steps) or producer (-1), or a sibling (another
  // consumer of the same producer) with `sibling`. Selects the first node when none is selected. False when there
  // is nowhere to go.
  bool stepAlongEdges(int direction, bool sibling = false);

 signals:
  void nodeSelected(int node);
  void clusterSelected(int cluster);
  void selectionCleared();
  void clusterToggleRequested(int cluster);
  // A node was double-clicked (If/Loop/Scan nodes open their body).
  void nodeActivated(int node);

 protected:
  void drawBackground(QPainter* painter, const QRectF& rect) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool focusNextPrevChild(bool next) override;
  void resizeEvent(QResizeEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  void onSelectionChanged();
  void placeMinimap();
  void setOverview(bool on);
  // Drawn neighbours of `node` along its edges: producers (direction < 0) or consumers, in document order.
  QVector<int> neighbours(int node, int direction) const;

  QGraphicsScene* scene_;
  std::shared_ptr<const bridge::GraphDocument> document_;
  QHash<int, GraphNodeItem*> nodeItems_;
  QHash<int, GraphClusterItem*> clusterItems_;
  QVector<int> highlighted_;
  GraphMinimap* minimap_;
  QVector<QGraphicsItem*> edgeItems_;
  bool edgesShown_ = true;
  bool overview_ = false;   // a huge graph far out: items hidden, overviewPicture_ drawn instead
  QImage overviewPicture_;  // the whole scene, rendered once per layout
  enum class Fit { None, Whole, Readable };
  Fit fitted_ = Fit::None;  // the view shows the graph as fitAll() or fitReadable() left it: kept so on resize
  bool tensorShapesShown_ = false;
  bool tensorTextsPlaced_ = false;  // since the last layout
  QVector<QRectF> captionRects_;    // expanded partitions' captions: edge texts keep off them
  void placeTensorTexts();
};

}  // namespace kiln::studio
