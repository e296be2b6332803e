#include "graph_panel.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QSaveFile>
#include <QSignalBlocker>
#include <QSplitter>
#include <QSvgGenerator>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "flow_layout.h"
#include "graph_loader.h"
#include "graph_view.h"
#include "source_compiled_link.h"
#include "source_compiled_links.h"
#include "node_details_view.h"

namespace kiln::studio {

namespace {

// PNG exports of big graphs are scaled down to this many pixels on the longer side (a 3000-node graph at full
// scale would need gigabytes).
constexpr double kMaxPngSide = 8000;

// A legend entry: the node look it explains, painted by the code that paints the nodes, then its text. (Rich text
// cannot draw it: Qt's HTML subset ignores borders on a span, so the fallback and EPContext swatches were blank.)
class LegendChip : public QLabel {
 public:
  static constexpr int kSwatchWidth = 26, kGap = 5;
  LegendChip(NodeLook look, const QColor& fill, const QString& text) : QLabel(text), look_(look), fill_(fill) {
    setObjectName(QStringLiteral("legendChip"));
    setTextFormat(Qt::PlainText);
    setContentsMargins(kSwatchWidth + kGap, 0, 0, 0);
    setProperty("look", static_cast<int>(look));
  }
  // Where the swatch is drawn, in the chip's coordinates.
  QRectF swatchRect() const {
    const double height = std::min(14.0, static_cast<double>(this->height()) - 4);
    return QRectF(2, (this->height() - height) / 2, kSwatchWidth - 4, height);
  }

 protected:
  void paintEvent(QPaintEvent* event) override {
    QLabel::paintEvent(event);
    QPainter painter(this);
    paintNodeLook(&painter, swatchRect(), look_, fill_);
  }

 private:
  NodeLook look_;
  QColor fill_;
};

QWidget* legendChip(NodeLook look, const QColor& fill, const QString& text) { return new LegendChip(look, fill, text); }

}  // namespace

GraphPanel::GraphPanel(QWidget* parent)
    : QWidget(parent),
      loader_(new bridge::GraphLoader(this)),
      layout_(new bridge::GraphLayout(this)),
      view_(new GraphView),
      details_(new NodeDetailsView),
      searchEdit_(new QLineEdit),
      matchLabel_(new QLabel),
      status_(new QLabel),
      breadcrumb_(new QLabel),
      legend_(new FlowLayout),
      cancelButton_(new QToolButton) {
  auto* toolbar = new QToolBar;
  toolbar->setIconSize(QSize(16, 16));
  searchEdit_->setObjectName(QStringLiteral("graphSearchEdit"));
  searchEdit_->setPlaceholderText(tr("Find node by name or op type"));
  searchEdit_->setClearButtonEnabled(true);
  searchEdit_->setMaximumWidth(260);
  toolbar->addWidget(searchEdit_);
  auto addButton = [&](const QString& text, const QString& tip, auto slot) {
    auto* button = new QToolButton;
    button->setText(text);
    button->setToolTip(tip);
    connect(button, &QToolButton::clicked, this, slot);
    toolbar->addWidget(button);
    graphActions_ << button;
    return button;
  };
  addButton(tr("\u25b2"), tr("Previous match (Shift+Enter)"), [this] { findPrevious(); });
  addButton(tr("\u25bc"), tr("Next match (Enter)"), [this] { findNext(); });
  toolbar->addWidget(matchLabel_);
  toolbar->addSeparator();
  addButton(tr("Fit"), tr("Show the whole graph (Ctrl+0); big graphs show their groups, double-click one to open it"),
            [this] { view_->fitAll(); });
  addButton(tr("+"), tr("Zoom in"), [this] { view_->zoomBy(1.25); });
  addButton(tr("\u2212"), tr("Zoom out"), [this] { view_->zoomBy(0.8); });
  toolbar->addSeparator();
  addButton(tr("Expand all"), tr("Show every node of every partition and group (re-layout)"), [this] { expandAll(); });
  addButton(tr("Collapse all"), tr("Show each partition and group as one box (re-layout)"), [this] { collapseAll(); });
  toolbar->addSeparator();
  addButton(tr("PNG\u2026"), tr("Export the graph as a PNG image"), [this] { exportWithDialog(false); });
  addButton(tr("SVG\u2026"), tr("Export the graph as an SVG drawing"), [this] { exportWithDialog(true); });
  cancelButton_->setObjectName(QStringLiteral("graphCancelButton"));
  cancelButton_->setText(tr("Cancel"));
  cancelButton_->setToolTip(tr("Stop loading or laying out"));
  connect(cancelButton_, &QToolButton::clicked, this, [this] {
    cancel();
    status_->setText(tr("Cancelled"));
  });
  // A toolbar shows or hides its widgets through their actions (QWidget::setVisible on the button does nothing there).
  cancelAction_ = toolbar->addWidget(cancelButton_);
  for (QWidget* w : graphActions_) w->setEnabled(false);
  cancelAction_->setVisible(false);

  connect(searchEdit_, &QLineEdit::textChanged, this, [this](const QString& text) { search(text); });
  connect(searchEdit_, &QLineEdit::returnPressed, this, [this] {
    if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier) {
      findPrevious();
    } else {
      findNext();
    }
  });

  legend_->setContentsMargins(4, 0, 4, 0);

  breadcrumb_->setObjectName(QStringLiteral("graphBreadcrumb"));
  breadcrumb_->setTextFormat(Qt::RichText);
  breadcrumb_->setContentsMargins(6, 0, 6, 0);
  breadcrumb_->setToolTip(tr("The graph on display; click a step to go back"));
  connect(breadcrumb_, &QLabel::linkActivated, this, [this](const QString& link) {
    const QString path = link.section(u'#', 0, 0);
    openGraph(path, link.section(u'#', 1));
  });
  breadcrumb_->hide();

  auto* splitter = new QSplitter;
  splitter_ = splitter;
  splitter->addWidget(view_);
  splitter->addWidget(details_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({900, 300});  // the rich-text details would otherwise claim most of the width
  details_->setMinimumWidth(160);

  // Neither the legend nor the status line may set the panel's minimum width: with the compiled graph beside the
  // source, two panels would widen the window and crush the summary dock. The legend and the status wrap.
  auto* legendBox = new QWidget;
  legendBox->setObjectName(QStringLiteral("graphLegend"));
  legendBox->setLayout(legend_);
  legendBox->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  toolbar->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  status_->setWordWrap(true);
  breadcrumb_->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(toolbar);
  layout->addWidget(legendBox);
  layout->addWidget(createInputShapesRow());
  layout->addWidget(breadcrumb_);
  layout->addWidget(splitter, 1);
  layout->addWidget(status_);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setText(tr("No model"));

  connect(loader_, &bridge::GraphLoader::progress, status_, &QLabel::setText);
  connect(loader_, &bridge::GraphLoader::loaded, this, &GraphPanel::onLoaded);
  connect(loader_, &bridge::GraphLoader::failed, this, [this](const QString& path, const QString& message) {
    setBusy(false);
    if (onInputShapesFailed(message)) return;  // the graph on display stays
    const QString text = tr("Could not open %1: %2").arg(QFileInfo(path).fileName(), message);
    status_->setText(text);
    emit failed(text);
  });
  connect(layout_, &bridge::GraphLayout::progress, status_, &QLabel::setText);
  connect(layout_, &bridge::GraphLayout::finished, this, &GraphPanel::onLayoutFinished);
  connect(layout_, &bridge::GraphLayout::failed, this, [this](const QString& message) {
    setBusy(false);
    status_->setText(message);
    emit failed(message);
  });

  connect(view_, &GraphView::nodeSelected, this, [this](int node) {
    if (!document_) return;
    details_->showNode(*document_, node);
    emit nodeSelected(document_->nodes()[node].name);
  });
  connect(view_, &GraphView::groupSelected, this, [this](int group) {
    if (document_) details_->showGroup(*document_, group);
  });
  connect(view_, &GraphView::clusterSelected, this, [this](int cluster) {
    if (document_) details_->showCluster(*document_, cluster);
  });
  connect(view_, &GraphView::selectionCleared, details_, &NodeDetailsView::clear);
  connect(view_, &GraphView::nodeActivated, this, [this](int node) {
    if (document_ && !document_->nodes()[node].bodies.isEmpty()) openGraph(document_->nodes()[node].bodies.first());
  });
  connect(details_, &NodeDetailsView::openBodyRequested, this, [this](const QString& path) { openGraph(path); });
  connect(view_, &GraphView::groupToggleRequested, this,
          [this](int group) { setGroupCollapsed(group, !collapsedGroups_.contains(group)); });
  connect(view_, &GraphView::clusterToggleRequested, this,
          [this](int cluster) { setClusterCollapsed(cluster, !collapsed_.contains(cluster)); });
  connect(details_, &NodeDetailsView::inspectBinaryRequested, this, &GraphPanel::inspectBinaryRequested);
}

GraphPanel::~GraphPanel() = default;

void GraphPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Narrow (the compiled graph beside the source): the details go below the graph instead of squeezing both.
  const Qt::Orientation wanted = width() < kNarrowWidth ? Qt::Vertical : Qt::Horizontal;
  if (splitter_->orientation() == wanted) return;
  splitter_->setOrientation(wanted);
  const int side = wanted == Qt::Vertical ? splitter_->height() : splitter_->width();
  splitter_->setSizes({side * 3 / 4, side / 4});
}

QGraphicsScene* GraphPanel::scene() const { return view_->scene(); }

QString GraphPanel::statusText() const { return status_->text(); }

bool GraphPanel::isBusy() const { return loader_->isBusy() || layout_->isRunning(); }

void GraphPanel::setBusy(bool busy) {
  cancelAction_->setVisible(busy);
  for (QWidget* w : graphActions_) w->setEnabled(!busy && document_ != nullptr);
}

void GraphPanel::openModel(const QString& path) {
  layout_->cancel();
  path_ = path;
  document_.reset();
  root_.reset();
  selectAfterLayout_.clear();
  breadcrumb_->hide();
  view_->clearGraph();
  details_->clear();
  matches_.clear();
  currentMatch_ = -1;
  {
    // The previous model's query would read "no match" on this one.
    const QSignalBlocker quiet(searchEdit_);
    searchEdit_->clear();
  }
  updateSearchLabel();
  status_->setText(tr("Opening %1\u2026").arg(QFileInfo(path).fileName()));  // no error of the previous model stays
  resetInputShapes();
  fitOnLayout_ = true;
  setBusy(true);
  loader_->load(path);
}

void GraphPanel::cancel() {
  loader_->cancel();
  layout_->cancel();
  setBusy(false);
}

void GraphPanel::onLoaded(std::shared_ptr<const bridge::GraphDocument> document, double loadMs) {
  root_ = document;
  loadMs_ = loadMs;
  if (onInputShapesLoaded()) return;  // re-inferred with input shapes: showDocument there
  showDocument(std::move(document));
}

void GraphPanel::showDocument(std::shared_ptr<const bridge::GraphDocument> document) {
  document_ = std::move(document);
  collapsed_.clear();
  collapsedGroups_.clear();
  // Groups exist only in graphs too big to read whole at Fit: they open collapsed.
  for (int g = 0; g < document_->groups().size(); ++g) collapsedGroups_.insert(g);
  fitOnLayout_ = true;
  details_->clear();
  updateBreadcrumb();
  // Big graphs start as their partitions: dot lays out a few dozen boxes in milliseconds where 3000 nodes take
  // seconds. A single partition holding everything stays expanded: collapsing it would show nothing.
  if (document_->opNodeCount() > kCollapseThreshold && document_->clusters().size() > 1) {
    for (int c = 0; c < document_->clusters().size(); ++c) {
      if (document_->clusters()[c].nodes.size() > 1) collapsed_.insert(c);
    }
  }
  updateLegend();
  relayout();
}

void GraphPanel::relayout() {
  if (!document_) return;
  visible_ = document_->visibleGraph(collapsed_, collapsedGroups_);
  setBusy(true);
  layout_->start(visible_, *document_);
}

void GraphPanel::onLayoutFinished(const bridge::GraphLayoutResult& result) {
  layoutMs_ = result.totalMs;
  view_->showGraph(document_, visible_, result, collapsed_);
  addTransferBadges(view_, *document_);  // compiled models: host↔device transfers at partition borders
  setBusy(false);
  if (fitOnLayout_) view_->fitAll();
  fitOnLayout_ = false;
  const int clustersShown = static_cast<int>(document_->clusters().size()) - static_cast<int>(collapsed_.size());
  QString text = tr("%1: %n node(s)", nullptr, root_->opNodeCountAll()).arg(QFileInfo(path_).fileName());
  if (!root_->bodyPaths().isEmpty()) {
    text += tr(" in %n graph(s)", nullptr, static_cast<int>(root_->bodyPaths().size()) + 1);
    text += tr("; showing %1 (%n node(s))", nullptr, document_->opNodeCount()).arg(document_->graphPath());
  }
  if (document_->foldedCount() == 1) text += tr(", 1 constant folded into its consumer");
  if (document_->foldedCount() > 1) text += tr(", %1 constants folded into their consumers").arg(document_->foldedCount());
  text += tr(", %n partition(s)", nullptr, static_cast<int>(document_->clusters().size()));
  if (!collapsed_.isEmpty()) text += tr(" (%1 collapsed, %2 expanded)").arg(collapsed_.size()).arg(clustersShown);
  if (!document_->groups().isEmpty()) {
    text += tr(", %n group(s)", nullptr, static_cast<int>(document_->groups().size()));
    text += tr(" (%1 collapsed: double-click to open)").arg(collapsedGroups_.size());
  }
  if (result.layered) {
    text += tr("; loaded in %1 ms, laid out in %2 ms (built-in layered layout: too big for dot)")
                .arg(loadMs_, 0, 'f', 0)
                .arg(result.totalMs, 0, 'f', 0);
  } else {
    text += tr("; loaded in %1 ms, laid out in %2 ms (dot %3 ms)")
                .arg(loadMs_, 0, 'f', 0)
                .arg(result.totalMs, 0, 'f', 0)
                .arg(result.dotMs, 0, 'f', 0);
  }
  if (!document_->partitionError().isEmpty()) {
    text += tr("; no partition report: %1").arg(document_->partitionError());
  }
  if (!document_->epContextError().isEmpty()) text += tr("; EPContext inspection failed: %1").arg(document_->epContextError());
  status_->setText(text);
  highlightMatches();
  if (!selectAfterLayout_.isEmpty()) {
    for (int i = 0; i < document_->nodes().size(); ++i) {
      if (document_->nodes()[i].name == selectAfterLayout_) focusAfterLayout_ = i;
    }
    selectAfterLayout_.clear();
  }
  if (focusAfterLayout_ >= 0) {
    view_->focusNode(focusAfterLayout_);
    focusAfterLayout_ = -1;
  }
  emit layoutReady();
}

void GraphPanel::updateLegend() {
  while (QLayoutItem* item = legend_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  QStringList eps = document_->executionProviders();
  for (const bridge::GraphNode& n : document_->nodes()) {
    if (n.kind == bridge::GraphNode::Kind::Op && !eps.contains(n.executionProvider)) eps << n.executionProvider;
  }
  for (const QString& ep : eps) {
    legend_->addWidget(legendChip(NodeLook::FILLED, epQColor(ep),
                                  ep.isEmpty() ? tr("no EP / removed by optimizer") : bridge::epShortName(ep)));
  }
  legend_->addWidget(legendChip(NodeLook::CPU_FALLBACK, Qt::white, tr("CPU fallback (dashed red)")));
  legend_->addWidget(legendChip(NodeLook::EP_CONTEXT, Qt::white, tr("EPContext (hexagon)")));
  if (document_->graphPath() != QLatin1String(bridge::GraphDocument::kMainPath)) {
    legend_->addWidget(legendChip(NodeLook::OUTER_SCOPE, Qt::white, tr("outer-scope value (dashed)")));
  }
  if (!bridge::borderTransfers(*document_).isEmpty()) {
    auto* badges = new QLabel(tr("H\u2192D / D\u2192H: host\u2194device copies at compiled partitions' borders"));
    badges->setObjectName(QStringLiteral("legendTransfers"));
    badges->setToolTip(tr("Each badge sums the values copied there; \"size unknown\": a value whose type or shape "
                          "is only known when the model runs"));
    legend_->addWidget(badges);
  }
}

void GraphPanel::setClusterCollapsed(int cluster, bool collapsed) {
  if (!document_ || cluster < 0 || cluster >= document_->clusters().size()) return;
  if (collapsed == collapsed_.contains(cluster)) return;
  if (collapsed) {
    collapsed_.insert(cluster);
  } else {
    collapsed_.remove(cluster);
  }
  relayout();
}

void GraphPanel::setGroupCollapsed(int group, bool collapsed) {
  if (!document_ || group < 0 || group >= document_->groups().size()) return;
  if (collapsed == collapsedGroups_.contains(group)) return;
  if (collapsed) {
    collapsedGroups_.insert(group);
  } else {
    collapsedGroups_.remove(group);
  }
  relayout();
}

void GraphPanel::expandAll() {
  if (!document_ || (collapsed_.isEmpty() && collapsedGroups_.isEmpty())) return;
  collapsed_.clear();
  collapsedGroups_.clear();
  fitOnLayout_ = true;
  relayout();
}

void GraphPanel::collapseAll() {
  if (!document_) return;
  QSet<int> all;
  for (int c = 0; c < document_->clusters().size(); ++c) all.insert(c);
  QSet<int> groups;
  for (int g = 0; g < document_->groups().size(); ++g) groups.insert(g);
  if (all == collapsed_ && groups == collapsedGroups_) return;
  collapsed_ = all;
  collapsedGroups_ = groups;
  fitOnLayout_ = true;
  relayout();
}

int GraphPanel::search(const QString& text) {
  matches_ = root_ ? root_->searchAll(text) : QVector<bridge::GraphHit>{};
  currentMatch_ = -1;
  highlightMatches();
  if (!matches_.isEmpty()) goToMatch(0);
  updateSearchLabel();
  return static_cast<int>(matches_.size());
}

void GraphPanel::highlightMatches() {
  QVector<int> here;
  if (document_) {
    for (const bridge::GraphHit& hit : matches_) {
      if (hit.graphPath == document_->graphPath()) here << document_->drawnNode(hit.node);
    }
  }
  view_->setHighlighted(here);
}

void GraphPanel::findNext() {
  if (matches_.isEmpty()) return;
  goToMatch((currentMatch_ + 1) % matches_.size());
}

void GraphPanel::findPrevious() {
  if (matches_.isEmpty()) return;
  goToMatch((currentMatch_ - 1 + matches_.size()) % matches_.size());
}

void GraphPanel::goToMatch(int index) {
  currentMatch_ = index;
  const bridge::GraphHit hit = matches_[index];
  updateSearchLabel();
  if (!document_ || hit.graphPath != document_->graphPath()) {
    // The match is in another graph: open it and go there once laid out.
    openGraph(hit.graphPath);
    focusAfterLayout_ = hit.node;
    return;
  }
  const int node = document_->drawnNode(hit.node);
  const int cluster = document_->clusterOf(node);
  const int group = document_->groupOf(node);
  if ((cluster >= 0 && collapsed_.contains(cluster)) || (group >= 0 && collapsedGroups_.contains(group))) {
    // The match hides in a collapsed partition or group: open it and go there once laid out.
    focusAfterLayout_ = node;
    collapsed_.remove(cluster);
    collapsedGroups_.remove(group);
    relayout();
  } else {
    view_->focusNode(node);
  }
}

void GraphPanel::selectNode(int node) { view_->focusNode(node); }

bool GraphPanel::openGraph(const QString& path, const QString& selectNode) {
  if (!root_) return false;
  std::shared_ptr<const bridge::GraphDocument> target =
      path == root_->graphPath() ? root_ : root_->body(path);
  if (!target) return false;
  layout_->cancel();
  focusAfterLayout_ = -1;
  selectAfterLayout_ = selectNode;
  if (target == document_) {
    relayout();
    return true;
  }
  showDocument(std::move(target));
  return true;
}

QString GraphPanel::currentGraphPath() const { return document_ ? document_->graphPath() : QString(); }

void GraphPanel::showModelNode(const QString& path, int modelIndex) {
  if (!root_) return;
  auto target = path == root_->graphPath() ? root_ : root_->body(path);
  if (!target) return;
  int node = -1;
  for (int i = 0; i < target->nodes().size(); ++i) {
    if (target->nodes()[i].kind == bridge::GraphNode::Kind::Op && target->nodes()[i].modelIndex == modelIndex) node = i;
  }
  if (node < 0) return;
  if (target != document_) {
    openGraph(path);
    focusAfterLayout_ = node;
    return;
  }
  view_->focusNode(node);
}

QString GraphPanel::breadcrumbText() const { return plainCrumbs_; }

void GraphPanel::updateBreadcrumb() {
  plainCrumbs_.clear();
  if (!root_ || root_->bodyPaths().isEmpty()) {
    breadcrumb_->hide();
    return;
  }
  const QVector<bridge::GraphCrumb> crumbs = bridge::GraphDocument::breadcrumb(root_->modelInfo(), document_->graphPath());
  QStringList html, plain;
  for (int i = 0; i < crumbs.size(); ++i) {
    const bridge::GraphCrumb& c = crumbs[i];
    plain << c.text;
    if (i + 1 == crumbs.size()) {
      html << QStringLiteral("<b>%1</b>").arg(c.text.toHtmlEscaped());
    } else {
      html << QStringLiteral("<a href='%1#%2'>%3</a>").arg(c.graphPath.toHtmlEscaped(), c.selectNode.toHtmlEscaped(), c.text.toHtmlEscaped());
    }
  }
  QString text = html.join(QStringLiteral(" \u25b8 "));
  // The other bodies of the same node (an If's other branch) are one click away.
  if (crumbs.size() >= 3) {
    const QString owner = crumbs[crumbs.size() - 2].graphPath + QStringLiteral("/") + crumbs[crumbs.size() - 2].text + QStringLiteral(".");
    QStringList siblings;
    for (const QString& body : root_->bodyPaths()) {
      if (body.startsWith(owner) && body != document_->graphPath() && !body.mid(owner.size()).contains(u'/')) {
        siblings << QStringLiteral("<a href='%1#'>%2</a>").arg(body.toHtmlEscaped(), body.mid(owner.size()).toHtmlEscaped());
      }
    }
    if (!siblings.isEmpty()) text += QStringLiteral("&nbsp;&nbsp;<span style='color:#777'>%1</span> %2").arg(tr("also:"), siblings.join(QStringLiteral(", ")));
  } else {
    text += QStringLiteral("&nbsp;&nbsp;<span style='color:#777'>%1</span>").arg(tr("double-click an If, Loop, Scan or function-call node to open its body"));
  }
  plainCrumbs_ = plain.join(QStringLiteral(" \u25b8 "));
  breadcrumb_->setText(text);
  breadcrumb_->show();
}

void GraphPanel::updateSearchLabel() {
  if (searchEdit_->text().trimmed().isEmpty()) {
    matchLabel_->clear();
  } else if (matches_.isEmpty()) {
    matchLabel_->setText(tr("no match"));
  } else {
    QString text = tr("%1 of %2").arg(currentMatch_ + 1).arg(matches_.size());
    if (currentMatch_ >= 0 && root_ && !root_->bodyPaths().isEmpty()) text += QStringLiteral(" (%1)").arg(matches_[currentMatch_].graphPath);
    matchLabel_->setText(text);
  }
}

bool GraphPanel::exportSvg(const QString& path, QString* error) {
  if (!document_ || scene()->items().isEmpty()) {
    *error = tr("No graph to export");
    return false;
  }
  const QRectF source = scene()->sceneRect();
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  QSvgGenerator generator;
  generator.setOutputDevice(&file);
  generator.setSize(source.size().toSize());
  generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
  generator.setTitle(QFileInfo(path_).fileName());
  generator.setDescription(tr("Graph of %1 drawn by Kiln Studio").arg(QFileInfo(path_).fileName()));
  QPainter painter;
  if (!painter.begin(&generator)) {
    *error = tr("Cannot start the SVG painter");
    return false;  // QSaveFile discards what it has not committed
  }
  view_->showAllEdges();
  scene()->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
  view_->updateLevelOfDetail();
  painter.end();
  if (!file.commit()) {
    *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

bool GraphPanel::exportPng(const QString& path, QString* error) {
  if (!document_ || scene()->items().isEmpty()) {
    *error = tr("No graph to export");
    return false;
  }
  const QRectF source = scene()->sceneRect();
  const double scale = std::min(2.0, kMaxPngSide / std::max(source.width(), source.height()));
  QImage image(QSize(static_cast<int>(std::ceil(source.width() * scale)), static_cast<int>(std::ceil(source.height() * scale))),
               QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) {
    *error = tr("Not enough memory for a %1 x %2 image").arg(source.width() * scale).arg(source.height() * scale);
    return false;
  }
  image.fill(Qt::white);
  {
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    view_->showAllEdges();
    scene()->render(&painter, QRectF(image.rect()), source);
    view_->updateLevelOfDetail();
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
    *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void GraphPanel::exportWithDialog(bool svg) {
  const QString suffix = svg ? QStringLiteral("svg") : QStringLiteral("png");
  const QFileInfo model(path_);
  const QString suggested = model.absolutePath() + QStringLiteral("/") + model.completeBaseName() + QStringLiteral("_graph.") + suffix;
  const QString path = QFileDialog::getSaveFileName(this, svg ? tr("Export SVG") : tr("Export PNG"), suggested,
                                                    svg ? tr("SVG drawings (*.svg)") : tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  const bool ok = svg ? exportSvg(path, &error) : exportPng(path, &error);
  status_->setText(ok ? tr("Exported %1").arg(path) : error);
}

}  // namespace kiln::studio
