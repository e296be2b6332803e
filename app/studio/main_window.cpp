#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
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
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

#include "bench_panel.h"
#include "binary_inspection.h"
#include "binary_inspector.h"
#include "compare_panel.h"
#include "compile_panel.h"
#include "environment_info.h"
#include "graph_panel.h"
#include "graph_view.h"
#include "shortcuts.h"
#include "source_compiled_link.h"
#include "theme.h"
#include "kiln/epcontext.h"
#include "kiln/model_package.h"
#include "merge_wizard.h"
#include "model_diff_view.h"
#include "model_loader.h"
#include "model_summary_view.h"
#include "node_details_view.h"
#include "node_table_model.h"
#include "package_view.h"
#include "recent_files.h"

namespace kiln::studio {

namespace {

const QString kAppTitle = QStringLiteral("Kiln Studio");

// A model with com.microsoft EPContext nodes (in any graph) was compiled already: it goes to the inspector, not to
// the compile panel (the Compile API refuses compiled inputs).
bool isCompiledModel(const ModelInfo& info) { return bridge::hasEpContextNodes(info); }

// Where op node `name` sits in `panel`'s model (any graph, bodies included): its graph path and model index.
std::optional<std::pair<QString, int>> findOpNode(const GraphPanel* panel, const QString& name) {
  const auto root = panel->rootDocument();
  if (!root || name.isEmpty()) return std::nullopt;
  for (const bridge::GraphHit& hit : root->searchAll(name)) {
    const auto document = hit.graphPath == root->graphPath() ? root : root->body(hit.graphPath);
    if (!document || hit.node < 0 || hit.node >= document->nodes().size()) continue;
    const bridge::GraphNode& node = document->nodes()[hit.node];
    if (node.kind == bridge::GraphNode::Kind::Op && node.name == name) return std::make_pair(hit.graphPath, node.modelIndex);
  }
  return std::nullopt;
}

// The first local .onnx file among dropped URLs, or "".
QString droppedModelPath(const QMimeData* mime) {
  if (!mime || !mime->hasUrls()) return {};
  for (const QUrl& url : mime->urls()) {
    const QString local = url.toLocalFile();
    if (url.isLocalFile() &&
        (local.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) || bridge::isContextBinaryFile(local) ||
         isModelPackage(local.toStdString()))) {
      return local;
    }
  }
  return {};
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      recent_(std::make_unique<bridge::RecentFiles>(settings_)),
      loader_(new bridge::ModelLoader(this)),
      vulkanProbe_(new bridge::VulkanProbe(this)),
      nodeModel_(new bridge::NodeTableModel(this)),
      nodeProxy_(new QSortFilterProxyModel(this)),
      tabs_(new QTabWidget),
      nodeTable_(new QTableView),
      graph_(new GraphPanel),
      compiledGraph_(new GraphPanel),
      compilePanel_(new CompilePanel),
      inspector_(new BinaryInspector),
      benchPanel_(new BenchPanel),
      filterEdit_(new QLineEdit),
      summary_(new ModelSummaryView),
      summaryDock_(new QDockWidget(tr("Model summary"), this)),
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
  // The graph a node sits in comes first; it is shown only for models with If/Loop/Scan bodies.
  nodeTable_->horizontalHeader()->moveSection(bridge::NodeTableModel::Graph, 0);

  // Double-clicking a row shows the node in the graph (opening its body first when it sits in one).
  connect(nodeTable_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const int row = nodeProxy_->mapToSource(index).row();
    tabs_->setCurrentIndex(0);
    graph_->showModelNode(nodeModel_->graphPath(row), nodeModel_->nodeIndex(row));
  });

  filterEdit_->setPlaceholderText(tr("Filter nodes by name, op type or value"));
  filterEdit_->setClearButtonEnabled(true);
  connect(filterEdit_, &QLineEdit::textChanged, nodeProxy_, &QSortFilterProxyModel::setFilterFixedString);

  auto* nodesPage = new QWidget;
  auto* layout = new QVBoxLayout(nodesPage);
  layout->setContentsMargins(6, 6, 6, 0);
  layout->setSpacing(4);
  layout->addWidget(filterEdit_);
  layout->addWidget(nodeTable_);
  tabs_->setDocumentMode(true);
  auto* graphs = new QSplitter(Qt::Horizontal);
  graphs->addWidget(graph_);
  graphs->addWidget(compiledGraph_);
  compiledGraph_->hide();  // shown when a compile finishes: the ctx model opens beside its source
  new SourceCompiledLink(graph_, compiledGraph_, this);  // selecting in one highlights its counterpart in the other
  for (GraphPanel* panel : {graph_, compiledGraph_}) {
    connect(panel, &GraphPanel::inspectBinaryRequested, this, &MainWindow::inspectBinary);
  }
  // Input shapes given in the graph panel: the Nodes table shows the concrete shapes too.
  connect(graph_, &GraphPanel::inputShapesApplied, this, [this] {
    if (const auto root = graph_->rootDocument()) {
      nodeModel_->setModelInfo(std::shared_ptr<const ModelInfo>(root, &root->modelInfo()));
    }
  });
  connect(inspector_, &BinaryInspector::nodeRequested, this,
          [this](const QString&, const QString& node, const QString& epContextNode) { showPipelineUser(node, epContextNode); });
  addPanel(graphs, tr("&Graph"));
  addPanel(nodesPage, tr("&Nodes"));
  addPanel(compilePanel_, tr("&Compile"));
  addPanel(inspector_, tr("&Binary"));
  addPanel(benchPanel_, tr("Bench&mark"));
  // Compare: per-output table, first divergence one click away, per-node overlay on the source graph.
  comparePanel_ = new ComparePanel;
  addPanel(comparePanel_, tr("C&ompare"));
  // The overlay goes on each graph panel its data belongs to (its model, or by name on the compiled twin); the
  // others show only a note saying whose data it is.
  for (GraphPanel* panel : {graph_, compiledGraph_}) {
    connect(panel, &GraphPanel::layoutReady, this, [this, panel] { applyOverlay(panel); });
    // A click on an overlaid node shows its numbers (and a compare run's histogram of differences) in its details.
    connect(panel, &GraphPanel::nodeSelected, this, [this, panel](const QString& node) {
      const auto* row = comparePanel_->overlay().row(node);
      if (row && overlayBinding(panel).shown()) panel->detailsView()->appendNodeMetrics(*row, comparePanel_->overlay().kind());
    });
  }
  connect(comparePanel_, &ComparePanel::overlayChanged, this, [this] {
    for (GraphPanel* panel : {graph_, compiledGraph_}) applyOverlay(panel);
  });
  connect(comparePanel_, &ComparePanel::showNodeRequested, this, [this, graphs](const QString& node) {
    showOverlaidNode(graphs, node);
  });
  setCentralWidget(tabs_);
  connect(compilePanel_, &CompilePanel::compiled, this, &MainWindow::onCompiled);
  // A ctx model opened by itself leads back to its source (its compile record names it).
  connect(graph_, &GraphPanel::layoutReady, this, [this] {
    offerSourceOfCompiled();
    warnIfCompiledFromAnotherSource();
  });
  connect(compiledGraph_, &GraphPanel::layoutReady, this, &MainWindow::warnIfCompiledFromAnotherSource);
  connect(summary_, &ModelSummaryView::openSourceRequested, this, &MainWindow::openSourceBeside);
  connect(compilePanel_, &CompilePanel::compileFailed, this, [this](const QString& code, const QString&) {
    statusBar()->showMessage(tr("Compile failed: %1").arg(code));
  });

  summaryDock_->setObjectName(QStringLiteral("summaryDock"));
  summaryDock_->setWidget(summary_);
  summary_->setMinimumWidth(220);  // never crushed to a sliver when the compiled graph opens beside the source
  summaryDock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable);
  addDockWidget(Qt::RightDockWidgetArea, summaryDock_);
  resizeDocks({summaryDock_}, {380}, Qt::Horizontal);

  statusBar()->addPermanentWidget(loadTimeLabel_);
  statusBar()->showMessage(tr("Open an ONNX model with File > Open or drop one here"));

  createMenus();
  resize(1280, 760);  // the first start's size; a saved geometry replaces it
  restoreGeometry(settings_.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings_.value(QStringLiteral("window/state")).toByteArray());

  connect(loader_, &bridge::ModelLoader::loaded, this, &MainWindow::onLoaded);
  connect(loader_, &bridge::ModelLoader::failed, this, &MainWindow::onFailed);
}

MainWindow::~MainWindow() = default;

bridge::OverlayBinding MainWindow::overlayBinding(GraphPanel* panel) const {
  const auto root = panel->rootDocument();
  if (!panel->document() || !root) return {bridge::OverlayMatch::OtherModel, {}};
  return comparePanel_->overlay().binding(*panel->document(), root->modelIdentity());
}

void MainWindow::applyOverlay(GraphPanel* panel) {
  if (const auto root = panel->rootDocument(); root && panel->document()) {
    comparePanel_->overlay().applyTo(panel->view(), *panel->document(), root->modelIdentity());
  }
}

void MainWindow::showOverlaidNode(QWidget* graphs, const QString& node) {
  const NodeOverlay& overlay = comparePanel_->overlay();
  const auto* row = overlay.row(node);
  const QString graph = row && !row->graph.isEmpty() ? row->graph : QString::fromLatin1(bridge::GraphDocument::kMainPath);
  for (GraphPanel* panel : {graph_, compiledGraph_}) {
    const auto root = panel->rootDocument();
    if (panel->isHidden() || !root || !overlayBinding(panel).shown()) continue;
    const auto target = graph == root->graphPath() ? root : root->body(graph);
    const int index = target ? NodeOverlay::nodeIndex(*target, node) : -1;
    if (index < 0) continue;
    tabs_->setCurrentWidget(graphs);
    if (target == panel->document()) {
      panel->view()->focusNode(index);
    } else {
      panel->openGraph(graph, node);
    }
    return;
  }
  const bridge::OverlayBinding binding = overlayBinding(graph_);
  statusBar()->showMessage(!binding.shown() && !binding.note.isEmpty()
                               ? binding.note
                               : tr("The first divergence, %1, is not in the model on display").arg(node));
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), shortcutKeys(QStringLiteral("file.open")), this, &MainWindow::chooseModel);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  rebuildRecentMenu();
  file->addAction(tr("Re&load"), shortcutKeys(QStringLiteral("file.reload")), this, [this] {
    if (info_) openModel(QString::fromStdString(info_->path));
  });
  file->addAction(tr("Inspect &Binary..."), shortcutKeys(QStringLiteral("file.inspect-binary")), this, &MainWindow::chooseBinary);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), shortcutKeys(QStringLiteral("file.quit")), this, &QWidget::close);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(summaryDock_->toggleViewAction());
  view->addMenu(createThemeMenu(this));
  // Tensor dtype and shape on every edge of both graph views (issue 22: shapes on demand).
  QAction* tensorShapes = view->addAction(tr("&Tensor Shapes on Edges"));
  tensorShapes->setObjectName(QStringLiteral("tensorShapesAction"));
  tensorShapes->setCheckable(true);
  tensorShapes->setShortcut(shortcutKeys(QStringLiteral("view.tensor-shapes")));
  connect(tensorShapes, &QAction::toggled, this, [this](bool on) {
    for (GraphPanel* panel : {graph_, compiledGraph_}) panel->view()->setTensorShapesShown(on);
  });
  view->addSeparator();
  // Ctrl+1..9 switch panels (Netron-style keyboard-first use); the tab titles carry Alt mnemonics as well.
  for (int i = 0; i < 9; ++i) {
    auto* action = new QAction(this);
    action->setShortcut(shortcutKeys(QStringLiteral("view.panel.%1").arg(i + 1)));
    connect(action, &QAction::triggered, this, [this, i] {
      if (i < tabs_->count()) tabs_->setCurrentIndex(i);
    });
    addAction(action);
  }

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  tools->addAction(tr("&Compile for Vulkan"), shortcutKeys(QStringLiteral("tools.compile")), this, [this] {
    showPanel(compilePanel_);
    if (!compilePanel_->isRunning() && !compilePanel_->sourceModel().isEmpty()) compilePanel_->startCompile();
  });
  tools->addAction(tr("C&ancel Compile"), shortcutKeys(QStringLiteral("tools.cancel-compile")), compilePanel_,
                   &CompilePanel::cancelCompile);
  tools->addSeparator();
  tools->addAction(tr("&Merge Compiled Models..."), shortcutKeys(QStringLiteral("tools.merge")), this,
                   &MainWindow::openMergeWizard);
  tools->addAction(tr("&Benchmark"), shortcutKeys(QStringLiteral("tools.benchmark")), this, [this] { showPanel(benchPanel_); });
  tools->addAction(tr("&Diff Models..."), shortcutKeys(QStringLiteral("tools.diff")), this, &MainWindow::chooseDiffModels)
      ->setObjectName(QStringLiteral("diffModelsAction"));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* sample = help->addAction(tr("Open &Sample Model"), this, &MainWindow::openSampleModel);
  sample->setEnabled(!bridge::sampleModelPath().isEmpty());
  help->addAction(tr("&Keyboard Shortcuts"), shortcutKeys(QStringLiteral("help.shortcuts")), this,
                  [this] { ShortcutsDialog(this).exec(); });
  help->addSeparator();
  QAction* about = help->addAction(tr("&About Kiln Studio"), this, &MainWindow::showAbout);
  about->setMenuRole(QAction::AboutRole);
  QAction* aboutQt = help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
  aboutQt->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recent_->existingFiles();
  for (int i = 0; i < files.size(); ++i) {
    const QString& path = files[i];
    // "&1 tiny_cnn.onnx  (~/models)" with the full path as tooltip and status tip.
    QAction* action = recentMenu_->addAction(bridge::recentFileLabel(i, path), this, [this, path] { openModel(path); });
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (!files.isEmpty()) recentMenu_->addSeparator();
  QAction* clear = recentMenu_->addAction(tr("&Clear List"), this, [this] {
    recent_->clear();
    rebuildRecentMenu();
  });
  clear->setEnabled(!files.isEmpty());
  recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::chooseModel() {
  QString startDir = settings_.value(QStringLiteral("lastDirectory")).toString();
  if (info_) startDir = QFileInfo(QString::fromStdString(info_->path)).absolutePath();
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open ONNX model"), startDir,
                                   tr("ONNX models (*.onnx);;Context binaries (*.bin);;Model packages (manifest.json);;All files (*)"));
  if (!path.isEmpty()) openModel(path);
}

void MainWindow::chooseBinary() {
  const QString startDir = settings_.value(QStringLiteral("lastDirectory")).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Inspect context binary"), startDir,
      tr("Context binaries and compiled models (*.bin *_ctx.onnx *.onnx);;All files (*)"));
  if (!path.isEmpty()) inspectBinary(path);
}

// Model A is the model on display; with none open, both are asked for.
void MainWindow::chooseDiffModels() {
  const QString filter = tr("ONNX models (*.onnx);;All files (*)");
  QString a = info_ ? QString::fromStdString(info_->path) : QString();
  if (a.isEmpty()) {
    a = QFileDialog::getOpenFileName(this, tr("Diff models: choose model A"),
                                     settings_.value(QStringLiteral("lastDirectory")).toString(), filter);
  }
  if (a.isEmpty()) return;
  const QString b = QFileDialog::getOpenFileName(this, tr("Diff %1 against model B").arg(QFileInfo(a).fileName()),
                                                 QFileInfo(a).absolutePath(), filter);
  if (!b.isEmpty()) openModelDiff(b, a);
}

ModelDiffView* MainWindow::openModelDiff(const QString& pathB, const QString& pathA) {
  const QString a = pathA.isEmpty() && info_ ? QString::fromStdString(info_->path) : pathA;
  if (!diffView_) {
    diffView_ = new ModelDiffView(this);
    diffView_->setWindowFlag(Qt::Window);
    diffView_->setAttribute(Qt::WA_DeleteOnClose);
  }
  diffView_->compare(a, pathB);
  diffView_->show();
  diffView_->raise();
  return diffView_;
}

void MainWindow::inspectBinary(const QString& path) {
  showPanel(inspector_);
  inspector_->inspect(path);
}

bool MainWindow::showPipelineUser(const QString& node, const QString& epContextNode) {
  const QList<std::pair<GraphPanel*, QString>> candidates = {{graph_, node}, {compiledGraph_, epContextNode}, {graph_, epContextNode}};
  for (const auto& [panel, name] : candidates) {
    if (panel == compiledGraph_ && compiledGraph_->isHidden()) continue;
    const auto found = findOpNode(panel, name);
    if (!found) continue;
    tabs_->setCurrentIndex(0);
    panel->showModelNode(found->first, found->second);
    statusBar()->showMessage(name == node ? tr("Selected node %1").arg(node)
                                          : tr("%1 is inside EPContext node %2: selected that").arg(node, name));
    return true;
  }
  statusBar()->showMessage(tr("Node %1 is not in the graph on display").arg(node));
  return false;
}

MergeWizard* MainWindow::openMergeWizard() {
  if (!mergeWizard_) {
    mergeWizard_ = new MergeWizard(this);
    mergeWizard_->setAttribute(Qt::WA_DeleteOnClose);
    if (info_ && isCompiledModel(*info_)) mergeWizard_->addModel(QString::fromStdString(info_->path));
    connect(mergeWizard_, &MergeWizard::merged, this, [this](const QString& output) {
      statusBar()->showMessage(tr("Merged into %1").arg(output));
      recent_->add(output);
    });
    connect(mergeWizard_, &MergeWizard::openRequested, this, &MainWindow::openModel);
  }
  mergeWizard_->show();
  mergeWizard_->raise();
  return mergeWizard_;
}

void MainWindow::addPanel(QWidget* panel, const QString& title) { tabs_->addTab(panel, title); }

void MainWindow::showPanel(QWidget* panel) { tabs_->setCurrentWidget(panel); }

// The compiled model opens beside its source: the inspector shows what was written, the recent list remembers it.
void MainWindow::onCompiled(const QString& ctxModelPath) {
  recent_->add(ctxModelPath);
  // A compile that outlived its model (another one was opened meanwhile) is not drawn beside the new one.
  if (!info_ || compilePanel_->resultSourceModel() != QString::fromStdString(info_->path)) return;
  showCompiledBeside(ctxModelPath);
  statusBar()->showMessage(tr("Compiled %1").arg(QFileInfo(ctxModelPath).fileName()));
}

void MainWindow::showCompiledBeside(const QString& ctxModelPath) {
  // Beside the source, half and half, without taking width from the summary dock.
  const int dockWidth = summaryDock_->isVisible() ? summaryDock_->width() : 0;
  compiledGraph_->show();
  if (auto* splitter = qobject_cast<QSplitter*>(graph_->parentWidget())) {
    const int half = std::max(200, (graph_->width() + compiledGraph_->width()) / 2);
    splitter->setSizes({half, half});
  }
  if (dockWidth > 0) resizeDocks({summaryDock_}, {dockWidth}, Qt::Horizontal);
  compiledGraph_->openModel(ctxModelPath);
  inspector_->inspect(ctxModelPath);
}

void MainWindow::offerSourceOfCompiled() {
  const auto root = graph_->rootDocument();
  if (!root || !info_) return;
  summary_->showCompiledFrom(QString::fromStdString(root->modelInfo().path),
                             QString::fromStdString(root->modelIdentity().sourceModel));
}

void MainWindow::openSourceBeside(const QString& sourcePath) {
  if (!info_) return;
  pendingCompiled_ = {sourcePath, QString::fromStdString(info_->path)};
  openModel(sourcePath);
}

void MainWindow::warnIfCompiledFromAnotherSource() {
  const auto source = graph_->rootDocument();
  const auto ctx = compiledGraph_->rootDocument();
  if (!source || !ctx || compiledGraph_->isHidden()) return;
  const std::string& recorded = ctx->modelIdentity().sourceHash;
  const std::string& current = source->modelIdentity().contentHash;
  if (recorded.empty() || current.empty() || recorded == current) return;
  statusBar()->showMessage(tr("%1 was compiled from another version of %2: it is stale (recompile it)")
                               .arg(QFileInfo(QString::fromStdString(ctx->modelInfo().path)).fileName(),
                                    QFileInfo(QString::fromStdString(source->modelInfo().path)).fileName()));
}

bool MainWindow::openSampleModel() {
  const QString path = bridge::sampleModelPath();
  if (path.isEmpty()) return false;
  openModel(path);
  return true;
}

PackageView* MainWindow::openPackage(const QString& folder) {
  if (!packageView_) {
    packageView_ = new PackageView(this);
    packageView_->setAttribute(Qt::WA_DeleteOnClose);
    connect(packageView_, &PackageView::openRequested, this, &MainWindow::openModel);
  }
  recent_->add(folder);
  packageView_->open(folder);
  packageView_->show();
  packageView_->raise();
  statusBar()->showMessage(tr("Opened model package %1").arg(QFileInfo(folder).fileName()));
  return packageView_;
}

void MainWindow::openModel(const QString& path) {
  const QFileInfo file(path);
  const QString folder = file.fileName() == QStringLiteral("manifest.json") ? file.absolutePath() : path;
  if (isModelPackage(folder.toStdString())) {  // a package: its variants first, a graph when the user picks one
    openPackage(folder);
    return;
  }
  if (bridge::isContextBinaryFile(path)) {  // a .bin opened or dropped as a model: what the user wants is the inspector
    recent_->add(path);
    inspectBinary(path);
    return;
  }
  statusBar()->showMessage(tr("Opening %1...").arg(QFileInfo(path).fileName()));
  // One override per busy period: a load that supersedes another reports once, so it must not push twice.
  if (!loader_->isBusy()) QApplication::setOverrideCursor(Qt::BusyCursor);
  loader_->load(path);
  filterEdit_->clear();  // the previous model's node filter would hide this model's nodes
  compiledGraph_->cancel();
  compiledGraph_->hide();
  graph_->openModel(path);
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
  nodeTable_->setColumnHidden(bridge::NodeTableModel::Graph, info_->subgraphs.empty());
  summary_->showModel(info_.get());
  fitColumns();

  const QString path = QString::fromStdString(info_->path);
  recent_->add(path);
  if (isCompiledModel(*info_)) {
    inspector_->inspect(path);
  } else {
    compilePanel_->setSourceModel(path);
  }
  benchPanel_->setModel(path);
  comparePanel_->setModelPath(path);
  settings_.setValue(QStringLiteral("lastDirectory"), QFileInfo(path).absolutePath());
  rebuildRecentMenu();

  const QString fileName = QFileInfo(path).fileName();
  setWindowTitle(QStringLiteral("%1 \u2014 %2").arg(kAppTitle, fileName));
  setWindowFilePath(path);
  loadTimeLabel_->setText(tr("Loaded in %1 ms").arg(loadMs, 0, 'f', 1));
  const auto nodeCount = static_cast<qsizetype>(info_->nodes.size());
  statusBar()->showMessage(nodeCount == 1 ? tr("%1: 1 node").arg(fileName)
                                          : tr("%1: %2 nodes").arg(fileName).arg(nodeCount));
  offerSourceOfCompiled();  // the graph may have loaded first
  // Opened as the source of the ctx model on display before: that ctx model goes beside it.
  const auto [source, compiled] = std::exchange(pendingCompiled_, {});
  if (!compiled.isEmpty() && source == path && !isCompiledModel(*info_)) showCompiledBeside(compiled);
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

QString MainWindow::aboutText() const {
  QString vulkan;
  if (!vulkanProbe_->hasResult()) {
    vulkan = tr("(querying the Vulkan drivers...)");
  } else {
    for (const QString& line : vulkanProbe_->devices()) vulkan += QStringLiteral("<br>") + line.toHtmlEscaped();
  }
  return tr("<h3>Kiln Studio %1</h3>"
            "<p>The desktop workbench of Kiln: partitioned graphs, Vulkan compilation, context binaries, merging "
            "and cold-versus-cached benchmarks.</p>"
            "<p>Kiln %1<br>Qt %2<br>Vulkan devices: %3</p>"
            "<p>kiln-studio is distributed under GPL-3.0-or-later (it uses Qt Charts, GPLv3 in open-source Qt); the "
            "Kiln engine library and the kiln command-line tool are Apache-2.0. Graph layout runs Graphviz's "
            "<tt>dot</tt> as a separate program.</p>")
      .arg(bridge::kilnVersion(), bridge::qtVersion(), vulkan);
}

void MainWindow::showAbout() {
  if (!aboutBox_) {
    aboutBox_ = new QMessageBox(QMessageBox::NoIcon, tr("About Kiln Studio"), {}, QMessageBox::Ok, this);
    aboutBox_->setAttribute(Qt::WA_DeleteOnClose);
    aboutBox_->setTextFormat(Qt::RichText);
    // The driver list arrives from a worker; the open box updates itself when it does.
    connect(vulkanProbe_, &bridge::VulkanProbe::finished, aboutBox_, [this] {
      if (aboutBox_) aboutBox_->setText(aboutText());
    });
  }
  vulkanProbe_->start();
  aboutBox_->setText(aboutText());
  aboutBox_->open();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  settings_.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings_.setValue(QStringLiteral("window/state"), saveState());
  QMainWindow::closeEvent(event);
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
