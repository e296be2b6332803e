// GraphView: draws a laid-out GraphDocument: one item per node (filled with its EP's color), per collapsed or
// expanded partition or group and per edge. Wheel zooms around the cursor, dragging the background pans,
// double-clicking a partition or a group asks for it to be collapsed or expanded (the panel re-lays out). Keys: + and
// - (with or without Ctrl) zoom, Ctrl+0 fits the whole graph; arrow keys and Tab walk from the selected node along
// its edges. A minimap in the corner shows where the view is while zoomed in; clicking it moves there. Labels follow
// the zoom (level of detail): name and op type when both fit, the op type alone when the name does not, nothing when
// no text would be legible; a label is never cut. Texts added on top of the graph (tensor shapes on edges, transfer
// badges) are placed where they cover no other text or box (placeText). Painting a 10,000-node graph at
// fit-to-view stays cheap.
#pragma once

#include <QGraphicsView>
#include <QHash>
#include <QImage>
#include <QPixmap>
#include <QSet>
#include <QWidget>

#include <memory>

#include "graph_document.h"
#include "graph_items.h"  // the node, partition and edge items the view draws
#include "graph_layout.h"
#include "label_space.h"

namespace kiln::studio {

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
  GraphClusterItem* groupItem(int group) const { return groupItems_.value(group); }
  // The item standing for document node `node`: its own, its collapsed group's or its collapsed partition's.
  QGraphicsItem* drawnItem(int node) const;
  const QHash<int, GraphNodeItem*>& nodeItems() const { return nodeItems_; }
  // Selects node `node` (or the collapsed partition holding it) and centers the view on it.
  void focusNode(int node);
  void setHighlighted(const QVector<int>& nodes);

  // The smallest on-screen size, in pixels, of a label that reads comfortably (node labels, group titles).
  static constexpr double kFitLabelPx = 8;
  // The scale at which node labels are kFitLabelPx on screen.
  static double readableZoom();
  // Fit (the Fit button, Ctrl+0, a graph just laid out): the whole graph in the view. Big graphs are grouped
  // (graph_groups.h), so at that scale their group titles are legible. Kept on resize.
  void fitAll();
  // Places a text box of `size` beside one of `anchors` (scene points, tried in order) where it covers no node,
  // caption or text placed before it, and takes it; else returns where it covers least (taken only with
  // `takeCovering`) and sets *covers.
  QRectF placeText(const QVector<QPointF>& anchors, const QSizeF& size, bool* covers = nullptr,
                   bool takeCovering = false);
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
  void groupSelected(int group);
  void selectionCleared();
  void clusterToggleRequested(int cluster);
  void groupToggleRequested(int group);
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
  QHash<int, GraphClusterItem*> groupItems_;
  QVector<int> highlighted_;
  GraphMinimap* minimap_;
  QVector<QGraphicsItem*> edgeItems_;
  bool edgesShown_ = true;
  bool overview_ = false;   // a huge graph far out: items hidden, overviewPicture_ drawn instead
  QImage overviewPicture_;  // the whole scene, rendered once per layout
  bool fitted_ = false;  // the view shows the whole graph as fitAll() left it: kept so on resize
  bool tensorShapesShown_ = false;
  bool tensorTextsPlaced_ = false;  // since the last layout
  LabelSpace labelSpace_;           // nodes, captions and the texts placed so far (placeText)
  void placeTensorTexts();
  void addFrames(const bridge::GraphLayoutResult& layout, const QSet<int>& collapsed);
};

}  // namespace kiln::studio
