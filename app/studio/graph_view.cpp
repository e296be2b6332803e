#include "graph_view.h"

#include <QKeyEvent>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "theme.h"

namespace kiln::studio {

namespace {

// Graphs with more nodes than this are one cached picture below kOverviewZoom.
constexpr int kOverviewNodes = 2000;
constexpr double kOverviewZoom = 0.12;
constexpr int kMinimapSide = 180;  // the minimap's longer side, in pixels

}  // namespace

// ----- minimap -----

GraphMinimap::GraphMinimap(GraphView* view) : QWidget(view), view_(view) {
  setObjectName(QStringLiteral("graphMinimap"));
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  hide();
}

void GraphMinimap::refresh() {
  const QRectF scene = view_->sceneRect();
  if (scene.isEmpty()) {
    picture_ = QPixmap();
    hide();
    return;
  }
  const double scale = kMinimapSide / std::max(scene.width(), scene.height());
  const QSize size(std::max(24, static_cast<int>(scene.width() * scale)), std::max(24, static_cast<int>(scene.height() * scale)));
  resize(size + QSize(6, 6));
  picture_ = QPixmap(size);
  picture_.fill(graphCanvasColor());
  QPainter painter(&picture_);
  view_->scene()->render(&painter, QRectF(picture_.rect()), scene);
}

QRectF GraphMinimap::picturedRect() const { return QRectF(3, 3, picture_.width(), picture_.height()); }

QRectF GraphMinimap::viewportFrame() const {
  const QRectF scene = view_->sceneRect();
  if (scene.isEmpty() || picture_.isNull()) return {};
  const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect().intersected(scene);
  const QRectF box = picturedRect();
  const double sx = box.width() / scene.width(), sy = box.height() / scene.height();
  return QRectF(box.left() + (visible.left() - scene.left()) * sx, box.top() + (visible.top() - scene.top()) * sy,
                visible.width() * sx, visible.height() * sy);
}

QPointF GraphMinimap::toScene(const QPointF& point) const {
  const QRectF scene = view_->sceneRect();
  const QRectF box = picturedRect();
  return {scene.left() + (point.x() - box.left()) * scene.width() / box.width(),
          scene.top() + (point.y() - box.top()) * scene.height() / box.height()};
}

void GraphMinimap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(0xf4, 0xf4, 0xf4));
  painter.setPen(QColor(0x90, 0x90, 0x90));
  painter.drawRect(rect().adjusted(0, 0, -1, -1));
  painter.drawPixmap(picturedRect().topLeft(), picture_);
  painter.setPen(QPen(QColor(0x10, 0x60, 0xff), 2));
  painter.setBrush(QColor(0x10, 0x60, 0xff, 40));
  painter.drawRect(viewportFrame());
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) { view_->centerOn(toScene(event->position())); }

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) view_->centerOn(toScene(event->position()));
}

// ----- view -----

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent), scene_(new QGraphicsScene(this)), minimap_(new GraphMinimap(this)) {
  setScene(scene_);
  setFocusPolicy(Qt::StrongFocus);  // keyboard zoom and node-to-node navigation
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setViewportUpdateMode(SmartViewportUpdate);
  // Every item sets the pen, brush and font it draws with: saving and restoring the painter per item is wasted
  // time on big graphs.
  setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
  setBackgroundBrush(Qt::white);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

GraphView::~GraphView() = default;

void GraphView::clearGraph() {
  minimap_->hide();
  overview_ = false;
  overviewPicture_ = QImage();
  edgesShown_ = true;
  edgeItems_.clear();
  captionRects_.clear();
  tensorTextsPlaced_ = false;
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
    const bridge::GraphCluster& cluster = document_->clusters()[it.key()];
    auto* item = new GraphClusterItem(cluster, it.key(), it.value(), false);
    scene_->addItem(item);
    clusterItems_.insert(it.key(), item);
    auto* caption = new PartitionCaptionItem(cluster.caption(), it.value(), item->fillColor());
    scene_->addItem(caption);
    captionRects_.push_back(caption->boundingRect());
  }
  edgeItems_.reserve(graph.edges.size());
  for (int i = 0; i < graph.edges.size(); ++i) {
    const bridge::VisibleGraph::Edge& e = graph.edges[i];
    QString text = document_->edgeTensorText(e.firstEdge);
    if (!text.isEmpty() && e.count > 1) text += tr(" +%1 more").arg(e.count - 1);
    auto* edge = new GraphEdgeItem(layout.edgeSplines[i], layout.edgeArrowTips[i], e.count, text);
    scene_->addItem(edge);
    edgeItems_.push_back(edge);
  }
  edgesShown_ = true;
  if (tensorShapesShown_) setTensorShapesShown(true);
  scene_->setSceneRect(layout.bounds.adjusted(-20, -20, 20, 20));
  minimap_->refresh();
  placeMinimap();
}

void GraphView::fitAll() {
  if (!scene_->sceneRect().isEmpty()) fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  fitted_ = Fit::Whole;
  placeMinimap();
}

double GraphView::readableZoom() { return kFitLabelPx / kLabelPx; }

void GraphView::fitReadable() {
  const QRectF scene = scene_->sceneRect();
  if (!scene.isEmpty()) fitInView(scene, Qt::KeepAspectRatio);
  if (!scene.isEmpty() && zoom() < readableZoom()) {
    // Netron's way: legible labels first; the top of the graph (its inputs) in view, centered across when the
    // graph is narrow enough, else on the first node.
    setTransform(QTransform::fromScale(readableZoom(), readableZoom()));
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    double x = scene.center().x();
    if (visible.width() < scene.width()) {
      const GraphNodeItem* first = nullptr;
      for (const GraphNodeItem* item : nodeItems_) {
        if (!first || item->sceneBoundingRect().top() < first->sceneBoundingRect().top() ||
            (item->sceneBoundingRect().top() == first->sceneBoundingRect().top() &&
             item->nodeIndex() < first->nodeIndex())) {
          first = item;
        }
      }
      if (first) x = first->sceneBoundingRect().center().x();
    }
    centerOn(QPointF(x, scene.top() + visible.height() / 2));
  }
  fitted_ = Fit::Readable;
  placeMinimap();
}

void GraphView::placeTensorTexts() {
  // Greedy, on a grid of 256-unit cells: each text keeps off the nodes, the partition captions and the texts
  // placed before it where its edge leaves room.
  constexpr double kCell = 256;
  auto forCells = [](const QRectF& r, const auto& visit) {
    for (auto x = static_cast<qint64>(std::floor(r.left() / kCell)); x <= std::floor(r.right() / kCell); ++x) {
      for (auto y = static_cast<qint64>(std::floor(r.top() / kCell)); y <= std::floor(r.bottom() / kCell); ++y) {
        visit((static_cast<quint64>(x) << 32) ^ static_cast<quint32>(y));
      }
    }
  };
  // Overlaps cost their area, more where the other box is drawn above the text and would hide it.
  struct Box {
    QRectF rect;
    double weight;
  };
  QHash<quint64, QVector<Box>> grid;
  auto occupy = [&](const QRectF& r, double weight) {
    forCells(r, [&](quint64 key) { grid[key].push_back({r, weight}); });
  };
  auto cost = [&](const QRectF& r) {
    double total = 0;
    forCells(r, [&](quint64 key) {
      for (const Box& other : grid.value(key)) {
        const QRectF overlap = other.rect.intersected(r);
        if (!overlap.isEmpty()) total += overlap.width() * overlap.height() * other.weight;
      }
    });
    return total;
  };
  for (const GraphNodeItem* node : nodeItems_) occupy(node->sceneBoundingRect(), 2);
  for (const GraphClusterItem* cluster : clusterItems_) {
    if (cluster->isCollapsed()) occupy(cluster->sceneBoundingRect(), 2);
  }
  for (const QRectF& caption : captionRects_) occupy(caption, 4);
  for (QGraphicsItem* item : edgeItems_) {
    auto* edge = static_cast<GraphEdgeItem*>(item);
    if (edge->tensorText().isEmpty()) continue;
    edge->placeTensorText(cost);
    occupy(edge->tensorTextRect(), 1);
  }
  tensorTextsPlaced_ = true;
}

void GraphView::setTensorShapesShown(bool on) {
  tensorShapesShown_ = on;
  if (on && !tensorTextsPlaced_) placeTensorTexts();
  for (QGraphicsItem* edge : edgeItems_) static_cast<GraphEdgeItem*>(edge)->setTensorTextShown(on);
}

void GraphView::zoomBy(double factor) {
  const double next = zoom() * factor;
  if (next < 0.002 || next > 8) return;  // beyond these the graph is a dot or one letter fills the view
  scale(factor, factor);
  fitted_ = Fit::None;
  placeMinimap();
}

void GraphView::showAllEdges() {
  setOverview(false);
  edgesShown_ = true;
  for (QGraphicsItem* edge : edgeItems_) edge->setVisible(true);
}

void GraphView::updateLevelOfDetail() {
  // A huge graph far out is one picture, drawn once: ten thousand blocks of a few pixels cost the view 20-80 ms a
  // paint in per-item work, the picture a millisecond.
  const bool overview = nodeItems_.size() > kOverviewNodes && zoom() < kOverviewZoom;
  if (overview != overview_) setOverview(overview);
  if (overview_) return;
  // Edges thinner than a pixel beside their nodes are left out of painting altogether: hidden items cost nothing,
  // while 13,000 edges returning early still cost the view a style option and a transform each.
  const bool show = zoom() >= kInvisibleEdgeLod;
  if (show == edgesShown_) return;
  edgesShown_ = show;
  for (QGraphicsItem* edge : edgeItems_) edge->setVisible(show);
}

void GraphView::setOverview(bool on) {
  if (on == overview_) return;
  if (on) {
    if (overviewPicture_.isNull()) {
      // Rendered with every item shown, at up to 4096 pixels on the longer side.
      const QRectF scene = scene_->sceneRect();
      const double scale = std::min(kOverviewZoom, 4096 / std::max(scene.width(), scene.height()));
      overviewPicture_ = QImage(std::max(1, static_cast<int>(scene.width() * scale)),
                                std::max(1, static_cast<int>(scene.height() * scale)), QImage::Format_RGB32);
      overviewPicture_.fill(graphCanvasColor());
      for (QGraphicsItem* edge : edgeItems_) edge->setVisible(true);
      // Fixed-size decorations (transfer badges) would cover the small picture: it shows nodes and edges only.
      for (QGraphicsItem* item : scene_->items()) {
        if (item->flags() & QGraphicsItem::ItemIgnoresTransformations) item->setVisible(false);
      }
      QPainter painter(&overviewPicture_);
      scene_->render(&painter, QRectF(overviewPicture_.rect()), scene);
    }
    for (QGraphicsItem* item : scene_->items()) item->setVisible(false);
  } else {
    for (QGraphicsItem* item : scene_->items()) item->setVisible(true);
    edgesShown_ = true;
  }
  overview_ = on;
  viewport()->update();
}

void GraphView::drawBackground(QPainter* painter, const QRectF& rect) {
  painter->fillRect(rect, graphCanvasColor());  // the theme's canvas (theme.h)
  if (!overview_ || overviewPicture_.isNull()) return;
  painter->drawImage(scene_->sceneRect(), overviewPicture_);
}

void GraphView::drawForeground(QPainter* painter, const QRectF& rect) {
  QGraphicsView::drawForeground(painter, rect);
  if (!overview_) return;
  // The picture has no selection or search highlights: they are drawn over it.
  const double pad = 3 / std::max(zoom(), 1e-6);
  painter->setPen(Qt::NoPen);
  painter->setBrush(QColor(0xff, 0xc0, 0x00));
  for (int node : highlighted_) {
    if (auto* item = nodeItems_.value(node)) painter->drawRect(item->sceneBoundingRect().adjusted(-pad, -pad, pad, pad));
  }
  if (auto* item = nodeItems_.value(selectedNode())) {
    painter->setBrush(QColor(0x10, 0x60, 0xff));
    painter->drawRect(item->sceneBoundingRect().adjusted(-pad, -pad, pad, pad));
  }
}

void GraphView::mousePressEvent(QMouseEvent* event) {
  if (overview_ && event->button() == Qt::LeftButton) {
    // The items are hidden behind the picture: a click goes to the nearest node and zooms onto it.
    const QPointF at = mapToScene(event->position().toPoint());
    int best = -1;
    double bestDistance = 1e300;
    for (auto it = nodeItems_.constBegin(); it != nodeItems_.constEnd(); ++it) {
      const QPointF d = it.value()->sceneBoundingRect().center() - at;
      const double distance = d.x() * d.x() + d.y() * d.y();
      if (distance < bestDistance) {
        bestDistance = distance;
        best = it.key();
      }
    }
    if (best >= 0) {
      focusNode(best);
      event->accept();
      return;
    }
  }
  QGraphicsView::mousePressEvent(event);
}

void GraphView::placeMinimap() {
  updateLevelOfDetail();
  // Shown only while part of the graph is out of sight: at fit it would repeat the view.
  const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  const bool needed = !scene_->sceneRect().isEmpty() && !visible.contains(scene_->sceneRect().adjusted(2, 2, -2, -2));
  const QRect area = viewport()->geometry();
  minimap_->move(area.right() - minimap_->width() - 8, area.bottom() - minimap_->height() - 8);
  minimap_->setVisible(needed && area.width() > 3 * minimap_->width() && area.height() > 2 * minimap_->height());
  minimap_->update();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  // A view showing the whole graph keeps showing it when its panel grows or shrinks (a wrapped status line, the
  // compiled graph opening beside the source).
  if (fitted_ == Fit::Whole) {
    fitAll();
  } else if (fitted_ == Fit::Readable) {
    fitReadable();
  } else {
    placeMinimap();
  }
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  placeMinimap();
}

int GraphView::selectedNode() const {
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (item->type() == GraphNodeItem::Type) return static_cast<GraphNodeItem*>(item)->nodeIndex();
  }
  return -1;
}

QVector<int> GraphView::neighbours(int node, int direction) const {
  QVector<int> found;
  if (!document_) return found;
  for (const bridge::GraphEdge& e : document_->edges()) {
    const int other = direction < 0 ? (e.to == node ? e.from : -1) : (e.from == node ? e.to : -1);
    if (other >= 0 && nodeItems_.contains(other) && !found.contains(other)) found.push_back(other);
  }
  std::sort(found.begin(), found.end());
  return found;
}

bool GraphView::stepAlongEdges(int direction, bool sibling) {
  if (nodeItems_.isEmpty()) return false;
  const int current = selectedNode();
  int target = -1;
  if (current < 0) {
    QList<int> drawn = nodeItems_.keys();
    std::sort(drawn.begin(), drawn.end());
    target = drawn.first();
  } else if (!sibling) {
    const QVector<int> next = neighbours(current, direction);
    if (!next.isEmpty()) target = next.first();
  } else {
    // Siblings: the other consumers of the first producer, else the other producers of the first consumer.
    QVector<int> group;
    const QVector<int> producers = neighbours(current, -1);
    if (!producers.isEmpty()) group = neighbours(producers.first(), 1);
    if (group.size() < 2) {
      const QVector<int> consumers = neighbours(current, 1);
      if (!consumers.isEmpty()) group = neighbours(consumers.first(), -1);
    }
    const qsizetype at = group.indexOf(current);
    if (group.size() >= 2 && at >= 0) target = group[(at + direction + group.size()) % group.size()];
  }
  if (target < 0) return false;
  focusNode(target);
  return true;
}

void GraphView::keyPressEvent(QKeyEvent* event) {
  const bool ctrl = event->modifiers() & Qt::ControlModifier;
  // Zoom around the view's center: the mouse may be anywhere.
  const ViewportAnchor anchor = transformationAnchor();
  setTransformationAnchor(AnchorViewCenter);
  bool handled = true;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomBy(1.25); break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore: zoomBy(0.8); break;
    case Qt::Key_0:
      if (ctrl) {
        fitReadable();
      } else {
        handled = false;
      }
      break;
    case Qt::Key_Down: handled = stepAlongEdges(1); break;
    case Qt::Key_Up: handled = stepAlongEdges(-1); break;
    case Qt::Key_Right: handled = selectedNode() >= 0 && stepAlongEdges(1, true); break;
    case Qt::Key_Left: handled = selectedNode() >= 0 && stepAlongEdges(-1, true); break;
    default: handled = false;
  }
  setTransformationAnchor(anchor);
  if (handled) {
    event->accept();
    return;
  }
  QGraphicsView::keyPressEvent(event);
}

bool GraphView::focusNextPrevChild(bool next) {
  // Tab and Shift+Tab walk the graph along its edges while it has nodes; at the end they leave the view.
  if (!nodeItems_.isEmpty() && stepAlongEdges(next ? 1 : -1)) return true;
  return QGraphicsView::focusNextPrevChild(next);
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
  // Hidden items cannot be selected: leave the picture first (the zoom below keeps it left).
  if (overview_ && zoom() < kTextLod) {
    zoomBy(0.9 / zoom());
  }
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
