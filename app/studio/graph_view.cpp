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

// What placed texts pay for covering: a node or a collapsed box, an expanded box's caption, another text.
constexpr double kBoxWeight = 2, kCaptionWeight = 4, kTextWeight = 1;
// How far beside the laid-out graph a placed text may go, in scene units.
constexpr double kTextRoom = 160;

// The tint of group `group`: its members' EP color, lighter than a partition's so its title reads.
QColor groupColor(const bridge::GraphDocument& document, const bridge::GraphGroup& group) {
  return epQColor(document.nodes()[group.nodes.first()].executionProvider).lighter(135);
}

// "Group 'encoder/layer.3': 24 nodes, from 'Conv_1' to 'Add_24'", and whether the group repeats a block.
QString groupTooltip(const bridge::GraphDocument& document, const bridge::GraphGroup& group) {
  QString tip = QObject::tr("Group '%1' (%2): from '%3' to '%4'")
                    .arg(group.title, group.subtitle(), document.nodes()[group.nodes.first()].displayName(),
                         document.nodes()[group.nodes.last()].displayName());
  tip += group.byScope ? QObject::tr("\nThe nodes of one name scope")
                       : QObject::tr("\nA stretch of the graph between narrow points, titled by its most common ops");
  if (group.alike > 1) tip += QObject::tr("\n%1 groups have the same ops: a repeated block").arg(group.alike);
  return tip;
}

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
  labelSpace_.clear();
  tensorTextsPlaced_ = false;
  nodeItems_.clear();
  clusterItems_.clear();
  groupItems_.clear();
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
    } else if (v.group >= 0) {
      const bridge::GraphGroup& group = document_->groups()[v.group];
      auto* item = new GraphClusterItem(group, v.group, layout.vertices[i], true, groupColor(*document_, group),
                                        groupTooltip(*document_, group));
      scene_->addItem(item);
      groupItems_.insert(v.group, item);
    }
    labelSpace_.occupy(layout.vertices[i], kBoxWeight);
  }
  addFrames(layout, collapsed);
  // Texts placed later stay near the graph; the scene grows to hold them (placeText), so Fit still shows them.
  labelSpace_.setBounds(layout.bounds.adjusted(-kTextRoom, -kTextRoom / 4, kTextRoom, kTextRoom / 4));
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

void GraphView::addFrames(const bridge::GraphLayoutResult& layout, const QSet<int>& collapsed) {
  // Expanded partitions and groups: a frame behind their members and a caption tab at its top.
  auto addCaption = [&](const QString& text, const QRectF& box, const QColor& color) {
    auto* caption = new PartitionCaptionItem(text, box, color);
    scene_->addItem(caption);
    labelSpace_.occupy(caption->boundingRect(), kCaptionWeight);
  };
  for (auto it = layout.clusterBoxes.constBegin(); it != layout.clusterBoxes.constEnd(); ++it) {
    if (collapsed.contains(it.key()) || it.key() < 0 || it.key() >= document_->clusters().size()) continue;
    const bridge::GraphCluster& cluster = document_->clusters()[it.key()];
    auto* item = new GraphClusterItem(cluster, it.key(), it.value(), false);
    scene_->addItem(item);
    clusterItems_.insert(it.key(), item);
    addCaption(cluster.caption(), it.value(), item->fillColor());
  }
  for (auto it = layout.groupBoxes.constBegin(); it != layout.groupBoxes.constEnd(); ++it) {
    if (it.key() < 0 || it.key() >= document_->groups().size()) continue;
    const bridge::GraphGroup& group = document_->groups()[it.key()];
    auto* item = new GraphClusterItem(group, it.key(), it.value(), false, groupColor(*document_, group),
                                      groupTooltip(*document_, group));
    scene_->addItem(item);
    groupItems_.insert(it.key(), item);
    addCaption(group.caption(), it.value(), item->fillColor().darker(130));
  }
}

void GraphView::fitAll() {
  if (!scene_->sceneRect().isEmpty()) fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  fitted_ = true;
  placeMinimap();
}

double GraphView::readableZoom() { return kFitLabelPx / kLabelPx; }

QRectF GraphView::placeText(const QVector<QPointF>& anchors, const QSizeF& size, bool* covers, bool takeCovering) {
  bool covering = false;
  const QRectF placed = labelSpace_.place(anchors, size, kTextWeight, &covering, takeCovering);
  if (covers) *covers = covering;
  if (!placed.isNull() && (!covering || takeCovering)) {
    scene_->setSceneRect(scene_->sceneRect().united(placed.adjusted(-20, -20, 20, 20)));
  }
  return placed;
}

QGraphicsItem* GraphView::drawnItem(int node) const {
  if (!document_) return nullptr;
  const int drawn = document_->drawnNode(node);
  if (QGraphicsItem* item = nodeItems_.value(drawn)) return item;
  if (QGraphicsItem* item = groupItems_.value(document_->groupOf(drawn))) return item;
  return clusterItems_.value(document_->clusterOf(drawn));
}

void GraphView::placeTensorTexts() {
  // Greedy: each text keeps off the nodes, the captions and the texts placed before it where its edge leaves room.
  for (QGraphicsItem* item : edgeItems_) {
    auto* edge = static_cast<GraphEdgeItem*>(item);
    if (edge->tensorText().isEmpty()) continue;
    edge->placeTensorText([this](const QVector<QPointF>& anchors, const QSizeF& size, bool* covers) {
      return placeText(anchors, size, covers);
    });
  }
  tensorTextsPlaced_ = true;
}

void GraphView::setTensorShapesShown(bool on) {
  tensorShapesShown_ = on;
  if (on && !tensorTextsPlaced_) {
    placeTensorTexts();
    if (fitted_) fitAll();  // the scene may have grown to hold them
  }
  for (QGraphicsItem* edge : edgeItems_) static_cast<GraphEdgeItem*>(edge)->setTensorTextShown(on);
}

void GraphView::zoomBy(double factor) {
  const double next = zoom() * factor;
  if (next < 0.002 || next > 8) return;  // beyond these the graph is a dot or one letter fills the view
  scale(factor, factor);
  fitted_ = false;
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
  if (fitted_) {
    fitAll();
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
        fitAll();
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
      const auto* box = static_cast<GraphClusterItem*>(item);
      if (box->isGroup()) {
        emit groupToggleRequested(box->clusterIndex());
      } else {
        emit clusterToggleRequested(box->clusterIndex());
      }
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
  QGraphicsItem* item = document_ ? drawnItem(node) : nodeItems_.value(node);
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
  if (item->type() == GraphClusterItem::Type) {
    const auto* box = static_cast<GraphClusterItem*>(item);
    if (box->isGroup()) {
      emit groupSelected(box->clusterIndex());
    } else {
      emit clusterSelected(box->clusterIndex());
    }
  }
}

}  // namespace kiln::studio
