#include "model_diff_view.h"

#include <QAction>
#include <QEvent>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QScopedValueRollback>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "graph_panel.h"
#include "graph_view.h"
#include "model_diff_job.h"
#include "shortcuts.h"
#include "status_label.h"
#include "theme.h"
#include "table_widgets.h"

namespace kiln::studio {

namespace {

enum Column { ChangeColumn, KindColumn, NameColumn, GraphColumn, WhatColumn, ColumnCount };

QColor diffColor(DiffChange change) {
  switch (change) {
    case DiffChange::ADDED: return diffAddedColor();
    case DiffChange::REMOVED: return diffRemovedColor();
    case DiffChange::CHANGED: break;
  }
  return diffChangedColor();
}

// A legend swatch: a node box filled as the graphs fill it.
QPixmap swatch(const QColor& fill, int height) {
  QPixmap pixmap(26, height);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  paintNodeLook(&painter, QRectF(2, 2, 22, height - 4), NodeLook::FILLED, fill);
  return pixmap;
}

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setToolTip(text);
  return item;
}

// "conv (Conv)" for a node, the name alone otherwise.
QString rowName(const bridge::DiffRow& row) {
  return row.opType.isEmpty() ? row.name : QStringLiteral("%1 (%2)").arg(row.name, row.opType);
}

}  // namespace

ModelDiffView::ModelDiffView(QWidget* parent) : QWidget(parent), job_(new bridge::ModelDiffJob(this)) {
  setObjectName(QStringLiteral("modelDiffView"));
  setWindowTitle(tr("Model Diff"));
  auto* graphs = new QSplitter(Qt::Horizontal);
  graphs->addWidget(createGraphColumn(A));
  graphs->addWidget(createGraphColumn(B));
  auto* lists = createChangeList();
  auto* main = new QSplitter(Qt::Vertical);
  main->setObjectName(QStringLiteral("diffSplitter"));
  main->addWidget(graphs);
  main->addWidget(lists);
  main->setStretchFactor(0, 3);
  main->setStretchFactor(1, 1);
  main->setSizes({600, 260});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(createHeader());
  layout->addWidget(main, 1);

  // The keys work anywhere in the window; the buttons' tooltips name them.
  auto addStep = [this](QToolButton* button, const QString& id, const QString& label, const QString& action,
                        bool (ModelDiffView::*step)()) {
    auto* shortcut = new QAction(action, this);
    shortcut->setShortcut(shortcutKeys(id));
    shortcut->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(shortcut, &QAction::triggered, this, [this, step] { (this->*step)(); });
    addAction(shortcut);
    button->setText(label);
    button->setToolTip(tr("%1 (%2)").arg(action, shortcut->shortcut().toString(QKeySequence::NativeText)));
    connect(button, &QToolButton::clicked, this, [this, step] { (this->*step)(); });
  };
  addStep(previousButton_, QStringLiteral("diff.previous"), tr("\u25b2 Previous"), tr("Previous change"),
          &ModelDiffView::previous);
  addStep(nextButton_, QStringLiteral("diff.next"), tr("Next \u25bc"), tr("Next change"), &ModelDiffView::next);

  connect(job_, &bridge::ModelDiffJob::finished, this, &ModelDiffView::onDiffFinished);
  connect(job_, &bridge::ModelDiffJob::failed, this, &ModelDiffView::onDiffFailed);
  resize(1400, 900);
  updateNavigation();
}

ModelDiffView::~ModelDiffView() = default;

QWidget* ModelDiffView::createHeader() {
  auto* header = new QWidget;
  auto* row = new QHBoxLayout(header);
  row->setContentsMargins(0, 0, 0, 0);
  status_ = makeStatusLabel(QStringLiteral("diffStatus"));
  status_->setText(tr("Choose two models to compare"));
  row->addWidget(status_, 1);
  legend_ = new QWidget;
  legend_->setObjectName(QStringLiteral("diffLegend"));
  new QHBoxLayout(legend_);
  legend_->layout()->setContentsMargins(0, 0, 0, 0);
  refreshLegend();
  row->addWidget(legend_);
  previousButton_ = new QToolButton;
  previousButton_->setObjectName(QStringLiteral("previousChangeButton"));
  nextButton_ = new QToolButton;
  nextButton_->setObjectName(QStringLiteral("nextChangeButton"));
  position_ = new QLabel;
  position_->setObjectName(QStringLiteral("diffPosition"));
  row->addSpacing(12);
  row->addWidget(previousButton_);
  row->addWidget(nextButton_);
  row->addWidget(position_);
  return header;
}

void ModelDiffView::refreshLegend() {
  QLayout* layout = legend_->layout();
  while (QLayoutItem* item = layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  const int height = fontMetrics().height() + 2;
  const std::pair<QColor, QString> entries[] = {{diffRemovedColor(), tr("removed (in A)")},
                                                {diffChangedColor(), tr("changed")},
                                                {diffAddedColor(), tr("added (in B)")},
                                                {diffUnchangedColor(), tr("unchanged")}};
  for (const auto& [color, text] : entries) {
    auto* box = new QLabel;
    box->setPixmap(swatch(color, height));
    layout->addWidget(box);
    auto* label = new QLabel(text);
    label->setObjectName(QStringLiteral("diffLegendEntry"));
    layout->addWidget(label);
  }
}

QWidget* ModelDiffView::createGraphColumn(Side side) {
  auto* column = new QWidget;
  auto* layout = new QVBoxLayout(column);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* caption = new QLabel;
  caption->setObjectName(side == A ? QStringLiteral("diffCaptionA") : QStringLiteral("diffCaptionB"));
  caption->setTextFormat(Qt::RichText);
  captions_[side] = caption;
  auto* panel = new GraphPanel;
  panel->setObjectName(side == A ? QStringLiteral("diffGraphA") : QStringLiteral("diffGraphB"));
  panels_[side] = panel;
  layout->addWidget(caption);
  layout->addWidget(panel, 1);
  connect(panel, &GraphPanel::layoutReady, this, [this, side] { onLaidOut(side); });
  connect(panel->view(), &GraphView::nodeSelected, this, [this, side](int node) { onNodeSelected(side, node); });
  return column;
}

QWidget* ModelDiffView::createChangeList() {
  table_ = makeListTable(QStringLiteral("diffTable"), {tr("Change"), tr("Kind"), tr("Name"), tr("Graph"), tr("What")});
  table_->setWordWrap(false);
  table_->setColumnHidden(GraphColumn, true);  // until a change sits in an If/Loop/Scan body
  // The summary fills what is left, elided (its tooltip has all of it): no sideways scrolling.
  table_->horizontalHeader()->setSectionResizeMode(WhatColumn, QHeaderView::Stretch);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { onCurrentRowChanged(current.isValid() ? current.row() : -1); });

  detailsTitle_ = new QLabel;
  detailsTitle_->setObjectName(QStringLiteral("diffDetailsTitle"));
  detailsTitle_->setWordWrap(true);
  detailsTitle_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_ = makeListTable(QStringLiteral("diffDetails"), {tr("Aspect"), tr("A"), tr("B")});
  details_->setSelectionMode(QAbstractItemView::NoSelection);
  details_->setWordWrap(true);
  details_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  details_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  auto* detailsBox = new QWidget;
  auto* detailsLayout = new QVBoxLayout(detailsBox);
  detailsLayout->setContentsMargins(0, 0, 0, 0);
  detailsLayout->addWidget(detailsTitle_);
  detailsLayout->addWidget(details_, 1);

  auto* lists = new QSplitter(Qt::Horizontal);
  lists->addWidget(table_);
  lists->addWidget(detailsBox);
  lists->setStretchFactor(0, 3);
  lists->setStretchFactor(1, 2);
  lists->setSizes({820, 560});
  showDetails(-1);
  return lists;
}

void ModelDiffView::compare(const QString& pathA, const QString& pathB) {
  paths_ = {pathA, pathB};
  diff_ = {};
  diffDone_ = false;
  pendingRow_ = {-1, -1};
  indexes_ = {};
  table_->setRowCount(0);
  showDetails(-1);
  updateNavigation();
  const QString nameA = QFileInfo(pathA).fileName(), nameB = QFileInfo(pathB).fileName();
  setWindowTitle(tr("Model Diff \u2014 %1 \u2194 %2").arg(nameA, nameB));
  details_->setHorizontalHeaderLabels({tr("Aspect"), tr("A: %1").arg(nameA), tr("B: %1").arg(nameB)});
  for (Side side : {A, B}) {
    const QString& path = paths_[side];
    captions_[side]->setText(QStringLiteral("<b>%1</b>&nbsp;&nbsp;%2").arg(side == A ? tr("A") : tr("B"),
                                                                           QFileInfo(path).fileName().toHtmlEscaped()));
    captions_[side]->setToolTip(path);
    panels_[side]->openModel(path);
  }
  showDiffColours(false);
  setStatus(status_, tr("Comparing %1 with %2\u2026").arg(nameA, nameB));
  job_->start(pathA, pathB);
}

void ModelDiffView::onDiffFinished(const bridge::ModelDiffRows& diff) {
  diff_ = diff;
  diffDone_ = true;
  indexes_ = {};
  fillTable();
  QString text = diff_.identical()
                     ? tr("No differences: %1 and %2 have the same opsets, inputs, outputs, nodes, attributes and "
                          "initializers")
                           .arg(QFileInfo(paths_[A]).fileName(), QFileInfo(paths_[B]).fileName())
                     : diff_.summary;
  for (const QString& note : diff_.notes) text += tr("; note: %1").arg(note);
  setStatus(status_, text);
  showDiffColours(true);
  updateNavigation();
  emit diffReady();
}

void ModelDiffView::onDiffFailed(const QString& code, const QString& message) {
  diffDone_ = true;
  const QString text = tr("Could not compare the models: %1: %2").arg(code, message);
  setStatus(status_, text, StatusTone::Error);
  showDetails(-1);
  updateNavigation();
  emit diffFailed(text);
}

const ModelDiffView::SideIndex* ModelDiffView::sideIndex(Side side) {
  SideIndex& at = indexes_[side];
  const auto document = panels_[side]->document();
  if (at.document != document || !at.index) {
    at.document = document;
    at.index = document ? std::make_unique<bridge::DiffNodeIndex>(*document) : nullptr;
    at.rowOfNode = document ? bridge::diffRowsByNode(diff_, side == A, *at.index) : QHash<int, int>{};
  }
  return &at;
}

// The graphs in the diff's colours under its legend, or (no diff to show) in their EP colours under theirs.
void ModelDiffView::showDiffColours(bool on) {
  diffColoured_ = on;
  legend_->setVisible(on);
  for (Side side : {A, B}) {
    if (auto* epLegend = panels_[side]->findChild<QWidget*>(QStringLiteral("graphLegend"))) epLegend->setVisible(!on);
    if (on) recolour(side);
  }
}

void ModelDiffView::fillTable() {
  const QSignalBlocker quiet(table_->selectionModel());  // no row is current yet
  table_->setRowCount(static_cast<int>(diff_.rows.size()));
  bool bodies = false;
  for (int r = 0; r < diff_.rows.size(); ++r) {
    const bridge::DiffRow& row = diff_.rows[r];
    auto* change = cell(QLatin1String(diffChangeName(row.change)));
    // Its colour as in the graphs, with dark text on it in either theme.
    change->setBackground(diffColor(row.change));
    change->setForeground(QColor(Qt::black));
    table_->setItem(r, ChangeColumn, change);
    table_->setItem(r, KindColumn, cell(bridge::diffCategoryName(row.category)));
    table_->setItem(r, NameColumn, cell(rowName(row)));
    table_->setItem(r, GraphColumn, cell(row.graph));
    table_->setItem(r, WhatColumn, cell(row.summary));
    bodies = bodies || (!row.graph.isEmpty() && row.graph != QLatin1String(bridge::GraphDocument::kMainPath));
  }
  table_->setColumnHidden(GraphColumn, !bodies);  // shown only when a change sits in an If/Loop/Scan body
  // Column by column: resizeColumnsToContents would size the stretched summary to its text as well.
  for (int column : {ChangeColumn, KindColumn, NameColumn, GraphColumn}) table_->resizeColumnToContents(column);
  const int cap = std::max(160, table_->viewport()->width() / 3);
  table_->setColumnWidth(NameColumn, std::min(table_->columnWidth(NameColumn), cap));
  table_->setCurrentIndex({});
}

int ModelDiffView::currentRow() const {
  const QModelIndex current = table_->selectionModel()->currentIndex();
  return current.isValid() ? current.row() : -1;
}

void ModelDiffView::selectRow(int row) {
  if (row < 0 || row >= table_->rowCount()) {
    table_->clearSelection();
    table_->setCurrentIndex({});
    return;
  }
  table_->setCurrentCell(row, ChangeColumn);
  table_->scrollToItem(table_->item(row, ChangeColumn));
}

bool ModelDiffView::next() {
  const int row = currentRow() + 1;
  if (row >= table_->rowCount()) return false;
  selectRow(row);
  return true;
}

bool ModelDiffView::previous() {
  const int row = currentRow() - 1;
  if (row < 0) return false;
  selectRow(row);
  return true;
}

void ModelDiffView::onCurrentRowChanged(int row) {
  showDetails(row);
  updateNavigation();
  if (row < 0) return;
  for (Side side : {A, B}) {
    if (side != origin_) focusRow(side, row);
  }
}

void ModelDiffView::updateNavigation() {
  const int row = currentRow(), count = table_->rowCount();
  previousButton_->setEnabled(row > 0);
  nextButton_->setEnabled(row + 1 < count);
  if (count == 0) {
    position_->clear();
  } else {
    position_->setText(row < 0 ? tr("%1 changes").arg(count) : tr("%1 of %2").arg(row + 1).arg(count));
  }
}

void ModelDiffView::showDetails(int row) {
  details_->setRowCount(0);
  if (row < 0 || row >= diff_.rows.size()) {
    const QString next = shortcutKeys(QStringLiteral("diff.next")).toString(QKeySequence::NativeText);
    detailsTitle_->setText(diff_.rows.isEmpty() ? tr("No change selected")
                                                : tr("Select a change (or press %1) to see A against B").arg(next));
    return;
  }
  const bridge::DiffRow& diffRow = diff_.rows[row];
  QString where = diffRow.graph.isEmpty() || diffRow.graph == QLatin1String(bridge::GraphDocument::kMainPath)
                      ? QString()
                      : tr(" in %1").arg(diffRow.graph.toHtmlEscaped());
  detailsTitle_->setText(tr("<b>%1</b> %2 %3%4")
                             .arg(rowName(diffRow).toHtmlEscaped(), bridge::diffCategoryName(diffRow.category),
                                  QLatin1String(diffChangeName(diffRow.change)), where));
  const QColor absent = palette().color(QPalette::PlaceholderText);
  details_->setRowCount(static_cast<int>(diffRow.details.size()));
  for (int r = 0; r < diffRow.details.size(); ++r) {
    const bridge::DiffDetail& detail = diffRow.details[r];
    details_->setItem(r, 0, cell(detail.aspect));
    int column = 1;
    for (const QString& value : {detail.a, detail.b}) {
      auto* item = cell(value.isEmpty() ? tr("(absent)") : value);
      if (value.isEmpty()) item->setForeground(absent);
      details_->setItem(r, column++, item);
    }
  }
  details_->resizeColumnToContents(0);
  details_->resizeRowsToContents();
}

void ModelDiffView::focusRow(Side side, int row) {
  GraphPanel* panel = panels_[side];
  pendingRow_[side] = -1;
  const bridge::DiffLocator& locator = side == A ? diff_.rows[row].inA : diff_.rows[row].inB;
  if (locator.kind != bridge::DiffLocator::Kind::None && panel->rootDocument() &&
      locator.graph != panel->currentGraphPath()) {
    // The change sits in another graph (an If/Loop body): open it, focus once it is laid out.
    pendingRow_[side] = row;
    if (panel->openGraph(locator.graph)) return;
    pendingRow_[side] = -1;
  }
  applyFocus(side, row);
}

void ModelDiffView::applyFocus(Side side, int row) {
  GraphPanel* panel = panels_[side];
  GraphView* view = panel->view();
  const auto document = panel->document();
  if (!document) return;
  const bridge::DiffLocator& locator = side == A ? diff_.rows[row].inA : diff_.rows[row].inB;
  const QVector<int> nodes = sideIndex(side)->index->locate(locator);
  const QScopedValueRollback<bool> quiet(syncing_, true);
  view->setHighlighted(locator.isItself() && nodes.size() < 2 ? QVector<int>{} : nodes);
  if (nodes.isEmpty()) {
    view->scene()->clearSelection();
    return;
  }
  if (locator.isItself()) {
    view->focusNode(nodes.first());
    return;
  }
  // Only the other side has it: show where it would sit (the nodes producing its inputs), selecting nothing.
  view->scene()->clearSelection();
  if (QGraphicsItem* item = view->nodeItem(document->drawnNode(nodes.first()))) view->centerOn(item);
}

void ModelDiffView::onLaidOut(Side side) {
  recolour(side);
  const int row = pendingRow_[side];
  pendingRow_[side] = -1;
  if (row >= 0 && row < diff_.rows.size()) applyFocus(side, row);
}

void ModelDiffView::onNodeSelected(Side side, int node) {
  if (syncing_ || !diffDone_) return;
  const auto document = panels_[side]->document();
  if (!document) return;
  const int found = sideIndex(side)->rowOfNode.value(node, -1);
  if (found < 0) {
    const QSignalBlocker quiet(table_->selectionModel());
    table_->clearSelection();
    table_->setCurrentIndex({});
    showDetails(-1);
    updateNavigation();
    focusCounterpart(side, node);
    return;
  }
  const QScopedValueRollback<int> from(origin_, side);
  if (found == currentRow()) {
    onCurrentRowChanged(found);
  } else {
    selectRow(found);
  }
}

void ModelDiffView::focusCounterpart(Side side, int node) {
  const Side otherSide = side == A ? B : A;
  GraphPanel* other = panels_[otherSide];
  const auto document = panels_[side]->document();
  const auto otherRoot = other->rootDocument();
  if (!otherRoot) return;
  const QScopedValueRollback<bool> quiet(syncing_, true);
  other->view()->setHighlighted({});
  if (other->currentGraphPath() != document->graphPath()) {
    // Named nodes are found once the other model's graph of the same path is laid out.
    if (!other->openGraph(document->graphPath(), document->nodes()[node].name)) {
      other->view()->scene()->clearSelection();
    }
    return;
  }
  const int match = bridge::matchingDiffNode(*document, node, *other->document());
  if (match >= 0) {
    other->view()->focusNode(match);
  } else {
    other->view()->scene()->clearSelection();
  }
}

void ModelDiffView::recolour(Side side) {
  GraphPanel* panel = panels_[side];
  const auto document = panel->document();
  if (!document || !diffColoured_) return;  // no diff on display: the EP colours stay
  const QHash<int, DiffChange> marks = bridge::diffMarks(diff_, side == A, *sideIndex(side)->index);
  for (auto it = panel->view()->nodeItems().begin(); it != panel->view()->nodeItems().end(); ++it) {
    const int node = it.key();
    if (node < 0 || node >= document->nodes().size()) continue;
    const auto mark = marks.constFind(node);
    if (mark != marks.constEnd()) {
      it.value()->setFillColor(diffColor(mark.value()));
    } else if (document->nodes()[node].kind == bridge::GraphNode::Kind::Op) {
      it.value()->setFillColor(diffUnchangedColor());  // graph inputs and outputs keep their own colour
    }
  }
}

QString ModelDiffView::summaryText() const { return status_->text(); }

bool ModelDiffView::isBusy() const { return job_->isRunning() || panels_[A]->isBusy() || panels_[B]->isBusy(); }

void ModelDiffView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // View ▸ Theme switched between light and dark: the unchanged nodes' grey follows the canvas.
  if (event->type() != QEvent::PaletteChange || !legend_) return;
  refreshLegend();
  for (Side side : {A, B}) recolour(side);
}

}  // namespace kiln::studio
