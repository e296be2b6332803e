#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "model_loader.h"
#include "model_summary_view.h"
#include "node_table_model.h"

namespace kiln::studio {

namespace {

const QString kAppTitle = QStringLiteral("Kiln Studio");

// The first local .onnx file among dropped URLs, or "".
QString droppedModelPath(const QMimeData* mime) {
  if (!mime || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) {
      return url.toLocalFile();
    }
  }
  return {};
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      loader_(new bridge::ModelLoader(this)),
      nodeModel_(new bridge::NodeTableModel(this)),
      nodeProxy_(new QSortFilterProxyModel(this)),
      nodeTable_(new QTableView),
      filterEdit_(new QLineEdit),
      summary_(new ModelSummaryView),
      loadTimeLabel_(new QLabel) {
  setWindowTitle(kAppTitle);
  setAcceptDrops(true);

  nodeProxy_->setSourceModel(nodeModel_);
  nodeProxy_->setFilterKeyColumn(-1);  // match any column: name, op type, value names
  nodeProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  nodeTable_->setModel(nodeProxy_);
  nodeTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  nodeTable_->setAlternatingRowColors(true);
  nodeTable_->setWordWrap(false);
  nodeTable_->setSortingEnabled(true);
  nodeTable_->sortByColumn(-1, Qt::AscendingOrder);  // topological order until the user sorts
  nodeTable_->verticalHeader()->setDefaultSectionSize(nodeTable_->fontMetrics().height() + 6);
  nodeTable_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  nodeTable_->horizontalHeader()->setStretchLastSection(true);
  nodeTable_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);

  filterEdit_->setPlaceholderText(tr("Filter nodes by name, op type or value"));
  filterEdit_->setClearButtonEnabled(true);
  connect(filterEdit_, &QLineEdit::textChanged, nodeProxy_, &QSortFilterProxyModel::setFilterFixedString);

  auto* central = new QWidget;
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->setSpacing(4);
  layout->addWidget(filterEdit_);
  layout->addWidget(nodeTable_);
  setCentralWidget(central);

  auto* dock = new QDockWidget(tr("Model summary"), this);
  dock->setObjectName(QStringLiteral("summaryDock"));
  dock->setWidget(summary_);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {380}, Qt::Horizontal);

  statusBar()->addPermanentWidget(loadTimeLabel_);
  statusBar()->showMessage(tr("Open an ONNX model with File > Open or drop one here"));

  createMenus(dock);

  connect(loader_, &bridge::ModelLoader::loaded, this, &MainWindow::onLoaded);
  connect(loader_, &bridge::ModelLoader::failed, this, &MainWindow::onFailed);
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus(QDockWidget* summaryDock) {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::chooseModel);
  open->setShortcut(QKeySequence::Open);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(summaryDock->toggleViewAction());
}

void MainWindow::chooseModel() {
  const QString startDir = info_ ? QFileInfo(QString::fromStdString(info_->path)).absolutePath() : QString();
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open ONNX model"), startDir, tr("ONNX models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) openModel(path);
}

void MainWindow::openModel(const QString& path) {
  statusBar()->showMessage(tr("Opening %1...").arg(QFileInfo(path).fileName()));
  // One override per busy period: a load that supersedes another reports once, so it must not push twice.
  if (!loader_->isBusy()) QApplication::setOverrideCursor(Qt::BusyCursor);
  loader_->load(path);
}

// Sizes columns to their contents, but caps the free-text ones (names, value lists) so that long names in big
// models do not push the output types out of sight; tooltips carry the full text.
void MainWindow::fitColumns() {
  using Column = bridge::NodeTableModel::Column;
  nodeTable_->resizeColumnsToContents();
  const int cap = std::max(140, nodeTable_->viewport()->width() / 5);
  for (const Column column : {Column::Name, Column::Inputs, Column::Outputs}) {
    nodeTable_->setColumnWidth(column, std::min(nodeTable_->columnWidth(column), cap));
  }
}

QString MainWindow::loadTimeText() const { return loadTimeLabel_->text(); }

void MainWindow::onLoaded(const ModelInfo& info, double loadMs) {
  QApplication::restoreOverrideCursor();
  info_ = std::make_shared<const ModelInfo>(info);
  lastError_.clear();
  nodeModel_->setModelInfo(info_);
  summary_->showModel(info_.get());
  fitColumns();

  const QString fileName = QFileInfo(QString::fromStdString(info_->path)).fileName();
  setWindowTitle(QStringLiteral("%1 \u2014 %2").arg(kAppTitle, fileName));
  loadTimeLabel_->setText(tr("Loaded in %1 ms").arg(loadMs, 0, 'f', 1));
  const auto nodeCount = static_cast<qsizetype>(info_->nodes.size());
  statusBar()->showMessage(nodeCount == 1 ? tr("%1: 1 node").arg(fileName)
                                          : tr("%1: %2 nodes").arg(fileName).arg(nodeCount));
  emit modelLoaded();
}

void MainWindow::onFailed(const QString& path, const QString& message) {
  QApplication::restoreOverrideCursor();
  lastError_ = message;
  const QString fileName = QFileInfo(path).fileName();
  statusBar()->showMessage(tr("Could not open %1").arg(fileName));

  // open() rather than exec(): window-modal for the user, but it never blocks a caller such as a test.
  if (!errorBox_) {
    errorBox_ = new QMessageBox(QMessageBox::Critical, kAppTitle, {}, QMessageBox::Ok, this);
    errorBox_->setAttribute(Qt::WA_DeleteOnClose);
  }
  errorBox_->setText(tr("Could not open %1").arg(fileName));
  errorBox_->setInformativeText(message);
  errorBox_->open();
  emit loadFailed(message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedModelPath(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedModelPath(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  openModel(path);
}

}  // namespace kiln::studio
