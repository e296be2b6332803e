#include "merge_wizard.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QWizardPage>

#include <functional>

#include "binary_inspection.h"
#include "graph_view.h"
#include "kiln/compiler.h"
#include "status_label.h"
#include "value_format.h"
#include "table_widgets.h"

namespace kiln::studio {

namespace {

const QColor kErrorColor = statusToneColor(StatusTone::Error);
const QColor kOkColor(0x1b, 0x7f, 0x3b);

// An editable list page: the table, its Add/Remove buttons in a row, then the status line.
void layOutTablePage(QWidget* page, QTableWidget* table, QPushButton* add, QPushButton* remove, QLabel* status) {
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(page);
  layout->addWidget(table, 1);
  layout->addLayout(buttons);
  layout->addWidget(status);
}

// A wizard page whose completeness is the wizard's to decide (it owns the plan every page looks at).
class PlanPage : public QWizardPage {
 public:
  std::function<bool()> complete;
  bool isComplete() const override { return complete ? complete() : true; }
  void refresh() { emit completeChanged(); }
};

QTableWidget* makeTable(const QString& objectName, const QStringList& headers) {
  QTableWidget* table = makeListTable(objectName, headers);
  table->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                         QAbstractItemView::AnyKeyPressed);  // the prefix column is typed into
  table->setWordWrap(false);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
  return table;
}

QTableWidgetItem* readOnly(const QString& text, const QString& tooltip = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  item->setToolTip(tooltip.isEmpty() ? text : tooltip);
  return item;
}

PlanPage* planPage(QWizard* wizard, int id) { return static_cast<PlanPage*>(wizard->page(id)); }

}  // namespace

MergeWizard::MergeWizard(QWidget* parent)
    : QWizard(parent),
      worker_(new bridge::MergeWorker(this)),
      modelTable_(makeTable(QStringLiteral("modelTable"), {tr("ctx model"), tr("Prefix"), tr("Contents")})),
      modelStatus_(makeStatusLabel(QStringLiteral("modelStatus"))),
      connectionTable_(makeTable(QStringLiteral("connectionTable"), {tr("Output (from)"), tr("Input (to)")})),
      connectionStatus_(makeStatusLabel(QStringLiteral("connectionStatus"))),
      inputTable_(makeTable(QStringLiteral("previewInputs"), {tr("Input"), tr("Type"), tr("From model")})),
      outputTable_(makeTable(QStringLiteral("previewOutputs"), {tr("Output"), tr("Type"), tr("From model")})),
      nodeTable_(makeTable(QStringLiteral("previewNodes"),
                           {tr("EPContext node"), tr("Partition"), tr("From model"), tr("Inputs"), tr("Outputs")})),
      conflictList_(new QListWidget),
      graphView_(new GraphView),
      graphLayout_(new bridge::GraphLayout(this)),
      graphStatus_(makeStatusLabel(QStringLiteral("graphStatus"))),
      outputEdit_(new QLineEdit),
      writeButton_(new QPushButton(tr("&Write"))),
      resultLabel_(makeStatusLabel(QStringLiteral("resultLabel"))) {
  setWindowTitle(tr("Merge compiled models"));
  setWizardStyle(QWizard::ClassicStyle);
  setOption(QWizard::NoCancelButtonOnLastPage, false);
  resize(900, 620);

  // Page 1: models and prefixes.
  auto* models = new PlanPage;
  models->setTitle(tr("Pick the compiled models"));
  models->setSubTitle(tr("Each model's node, value, partition and graph names get its prefix, so names stay unique."));
  models->complete = [this] {
    if (models_.size() < 2 || !modelsSettled()) return false;
    return std::all_of(models_.begin(), models_.end(), [](const auto& m) { return m.info != nullptr; });
  };
  auto* addButton = new QPushButton(tr("&Add..."));
  auto* removeButton = new QPushButton(tr("&Remove"));
  connect(addButton, &QPushButton::clicked, this, &MergeWizard::chooseModels);
  connect(removeButton, &QPushButton::clicked, this, [this] {
    if (modelTable_->currentRow() >= 0) removeModel(modelTable_->currentRow());
  });
  connect(modelTable_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (item->column() == 1 && item->row() < models_.size()) setPrefix(item->row(), item->text());
  });
  layOutTablePage(models, modelTable_, addButton, removeButton, modelStatus_);
  setPage(ModelsPage, models);

  // Page 2: connections.
  auto* connections = new PlanPage;
  connections->setTitle(tr("Connect models (optional)"));
  connections->setSubTitle(tr("Feed an output of one model to an input of another: that input stops being an input "
                              "of the merged model."));
  connections->complete = [this] { return preview().connectionErrors.isEmpty(); };
  auto* addConnectionButton = new QPushButton(tr("Add &connection"));
  auto* removeConnectionButton = new QPushButton(tr("Re&move"));
  connect(addConnectionButton, &QPushButton::clicked, this, [this] {
    const bridge::MergePreview plan = bridge::computeMergePreview(models_, {});
    addConnection(plan.outputs.isEmpty() ? QString() : plan.outputs.first().name,
                  plan.inputs.isEmpty() ? QString() : plan.inputs.last().name);
  });
  connect(removeConnectionButton, &QPushButton::clicked, this, [this] {
    if (connectionTable_->currentRow() >= 0) removeConnection(connectionTable_->currentRow());
  });
  layOutTablePage(connections, connectionTable_, addConnectionButton, removeConnectionButton, connectionStatus_);
  setPage(ConnectionsPage, connections);

  // Page 3: preview.
  auto* previewPage = new PlanPage;
  previewPage->setTitle(tr("Preview the merged model"));
  previewPage->setSubTitle(tr("What the merged model will hold. Name conflicts must be resolved (go Back and change "
                              "a prefix) before it can be written."));
  previewPage->complete = [this] { return preview().ok(); };
  conflictList_->setObjectName(QStringLiteral("conflictList"));
  conflictList_->setMaximumHeight(130);
  auto* valuesSplitter = new QSplitter(Qt::Horizontal);
  auto wrap = [](const QString& title, QWidget* widget) {
    auto* box = new QGroupBox(title);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(widget);
    return box;
  };
  valuesSplitter->addWidget(wrap(tr("Inputs"), inputTable_));
  valuesSplitter->addWidget(wrap(tr("Outputs"), outputTable_));
  auto* previewSplitter = new QSplitter(Qt::Vertical);
  previewSplitter->addWidget(valuesSplitter);
  previewSplitter->addWidget(wrap(tr("EPContext nodes"), nodeTable_));
  for (QTableWidget* table : {inputTable_, outputTable_, nodeTable_}) {
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setAlternatingRowColors(true);
  }
  auto* previewLayout = new QVBoxLayout(previewPage);
  previewLayout->addWidget(previewSplitter, 1);
  previewLayout->addWidget(new QLabel(tr("Conflicts and problems:")));
  previewLayout->addWidget(conflictList_);
  setPage(PreviewPage, previewPage);

  // Page 4: the merged graph, drawn as the Graph tab draws a model.
  auto* graphPage = new PlanPage;
  graphPage->setTitle(tr("The merged graph"));
  graphPage->setSubTitle(tr("The merged model as it will be written: each model's EPContext nodes (hexagons) under "
                            "their prefixed names, each in its own partition, and the merged inputs and outputs. Nothing "
                            "is written yet."));
  graphPage->complete = [this] { return preview().ok(); };
  graphView_->setObjectName(QStringLiteral("mergedGraph"));
  graphView_->setMinimumHeight(280);
  connect(graphLayout_, &bridge::GraphLayout::finished, this, &MergeWizard::onGraphLaidOut);
  connect(graphLayout_, &bridge::GraphLayout::failed, this, [this](const QString& message) {
    setStatus(graphStatus_, tr("The graph could not be laid out: %1").arg(message), StatusTone::Error);
    emit graphPreviewReady();
  });
  auto* fitButton = new QPushButton(tr("&Fit"));
  fitButton->setToolTip(tr("Fit the whole graph in the view (+ and - zoom)"));
  connect(fitButton, &QPushButton::clicked, this, &MergeWizard::fitGraph);
  auto* graphRow = new QHBoxLayout;
  graphRow->addWidget(graphStatus_, 1);
  graphRow->addWidget(fitButton);
  auto* graphLayout = new QVBoxLayout(graphPage);
  graphLayout->addWidget(graphView_, 1);
  graphLayout->addLayout(graphRow);
  setPage(GraphPage, graphPage);

  // Page 5: write.
  auto* writePage = new PlanPage;
  writePage->setTitle(tr("Write the merged model"));
  writePage->setSubTitle(tr("The merged ctx model and one combined binary (<name>_vulkan.bin) beside it, weights "
                            "deduplicated across the inputs. The inputs are never modified."));
  writePage->setFinalPage(true);
  writePage->complete = [this] { return outcome_.has_value() && !writing_; };
  outputEdit_->setObjectName(QStringLiteral("outputEdit"));
  outputEdit_->setPlaceholderText(tr("merged_ctx.onnx"));
  connect(outputEdit_, &QLineEdit::textChanged, this, [this] {
    outcome_.reset();  // a new name is a new write
    // Say so before the click: an existing merged model is replaced (atomically, when the write succeeds).
    const QString path = outputPath();
    const bool exists = !path.isEmpty() && QFileInfo::exists(path);
    setStatus(resultLabel_, exists ? tr("%1 exists: writing replaces it.").arg(QFileInfo(path).fileName()) : QString());
    planPage(this, WritePage)->refresh();
  });
  auto* browse = new QPushButton(tr("&Browse..."));
  connect(browse, &QPushButton::clicked, this, &MergeWizard::chooseOutput);
  writeButton_->setObjectName(QStringLiteral("writeButton"));
  connect(writeButton_, &QPushButton::clicked, this, &MergeWizard::write);
  auto* outputRow = new QHBoxLayout;
  outputRow->addWidget(new QLabel(tr("Output:")));
  outputRow->addWidget(outputEdit_, 1);
  outputRow->addWidget(browse);
  outputRow->addWidget(writeButton_);
  auto* writeLayout = new QVBoxLayout(writePage);
  writeLayout->addLayout(outputRow);
  writeLayout->addWidget(resultLabel_);
  openButton_ = new QPushButton(tr("Open merged model"));
  openButton_->setObjectName(QStringLiteral("openMergedButton"));
  openButton_->setToolTip(tr("Open the merged ctx model in the studio and close this wizard"));
  openButton_->hide();
  connect(openButton_, &QPushButton::clicked, this, [this] {
    emit openRequested(writtenPath_);
    accept();
  });
  auto* openRow = new QHBoxLayout;
  openRow->addWidget(openButton_);
  openRow->addStretch(1);
  writeLayout->addLayout(openRow);
  writeLayout->addStretch(1);
  setPage(WritePage, writePage);

  connect(worker_, &bridge::MergeWorker::modelInspected, this, &MergeWizard::onModelInspected);
  connect(worker_, &bridge::MergeWorker::modelFailed, this, &MergeWizard::onModelFailed);
  connect(worker_, &bridge::MergeWorker::merged, this, &MergeWizard::onMerged);
  connect(worker_, &bridge::MergeWorker::mergeFailed, this, &MergeWizard::onMergeFailed);
  refreshModelTable();
}

MergeWizard::~MergeWizard() = default;

bridge::MergePreview MergeWizard::preview() const { return bridge::computeMergePreview(models_, connections_); }

bool MergeWizard::modelsSettled() const {
  return std::all_of(models_.begin(), models_.end(), [](const auto& m) { return m.info || !m.error.isEmpty(); });
}

void MergeWizard::chooseModels() {
  const QString start = models_.isEmpty() ? QString() : QFileInfo(models_.last().path).absolutePath();
  const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Add compiled models"), start,
                                                          tr("Compiled ctx models (*_ctx.onnx *.onnx);;All files (*)"));
  for (const QString& path : paths) addModel(path);
}

void MergeWizard::addModel(const QString& ctxPath, const QString& prefix) {
  bridge::MergeModelEntry entry;
  entry.path = QFileInfo(ctxPath).absoluteFilePath();
  entry.prefix = prefix.isEmpty() ? bridge::defaultMergePrefix(ctxPath) : prefix;
  models_ << entry;
  if (outputEdit_->text().isEmpty()) {
    outputEdit_->setText(QDir(QFileInfo(entry.path).absolutePath()).filePath(QStringLiteral("merged_ctx.onnx")));
  }
  // Reading a ctx model follows it to its binaries and validates them: a worker-thread job.
  worker_->inspectModel(entry.path);
  planChanged();
}

void MergeWizard::removeModel(int row) {
  if (row < 0 || row >= models_.size()) return;
  models_.removeAt(row);
  planChanged();
  if (modelsSettled()) emit modelsInspected();
}

void MergeWizard::setPrefix(int row, const QString& prefix) {
  if (row < 0 || row >= models_.size() || models_[row].prefix == prefix) return;
  models_[row].prefix = prefix;
  planChanged();
}

void MergeWizard::addConnection(const QString& from, const QString& to) {
  connections_ << bridge::MergeConnection{from, to};
  planChanged();
}

void MergeWizard::removeConnection(int row) {
  if (row < 0 || row >= connections_.size()) return;
  connections_.removeAt(row);
  planChanged();
}

void MergeWizard::setOutputPath(const QString& path) { outputEdit_->setText(path); }

QString MergeWizard::outputPath() const { return outputEdit_->text().trimmed(); }

void MergeWizard::onModelInspected(const QString& path, std::shared_ptr<const EpContextModelInfo> info) {
  for (auto& entry : models_) {
    if (entry.path == path && !entry.info) {
      entry.info = info;
      entry.error.clear();
    }
  }
  planChanged();
  if (modelsSettled()) emit modelsInspected();
}

void MergeWizard::onModelFailed(const QString& path, const QString& message) {
  for (auto& entry : models_) {
    if (entry.path == path && !entry.info) entry.error = message;
  }
  planChanged();
  if (modelsSettled()) emit modelsInspected();
}

// Every page reads the same plan: any change refreshes what is visible and each page's Next/Finish state.
void MergeWizard::planChanged() {
  outcome_.reset();
  refreshModelTable();
  refreshConnectionTable();
  refreshPreview();
  for (int id : pageIds()) planPage(this, id)->refresh();
}

void MergeWizard::refreshModelTable() {
  const QSignalBlocker blocker(modelTable_);
  const int current = modelTable_->currentRow();
  modelTable_->setRowCount(static_cast<int>(models_.size()));
  for (int row = 0; row < models_.size(); ++row) {
    const bridge::MergeModelEntry& entry = models_[row];
    modelTable_->setItem(row, 0, readOnly(QFileInfo(entry.path).fileName(), entry.path));
    // The prefix cell is the one editable cell; rewriting it while the user types would move the cursor.
    if (!modelTable_->item(row, 1) || modelTable_->item(row, 1)->text() != entry.prefix) {
      modelTable_->setItem(row, 1, new QTableWidgetItem(entry.prefix));
    }
    QTableWidgetItem* item = nullptr;
    if (!entry.error.isEmpty()) {
      item = readOnly(entry.error);
      item->setForeground(kErrorColor);
    } else if (!entry.info) {
      item = readOnly(tr("reading..."));
    } else {
      const EpContextModelInfo& info = *entry.info;
      item = readOnly(tr("%1 EPContext node(s), %2 input(s), %3 output(s), %4 CPU node(s)")
                          .arg(info.nodes.size())
                          .arg(info.inputs.size())
                          .arg(info.outputs.size())
                          .arg(info.otherNodes));
    }
    modelTable_->setItem(row, 2, item);
  }
  if (current >= 0 && current < modelTable_->rowCount()) modelTable_->selectRow(current);
  modelTable_->resizeColumnToContents(0);
  modelTable_->setColumnWidth(1, std::max(modelTable_->columnWidth(1), 120));

  const bridge::MergePreview plan = preview();
  if (models_.size() < 2) {
    setStatus(modelStatus_, tr("Add at least two compiled models (*_ctx.onnx)."));
  } else if (!modelsSettled()) {
    setStatus(modelStatus_, tr("Reading the models..."));
  } else if (!plan.problems.isEmpty()) {
    setStatus(modelStatus_, plan.problems.join(QLatin1Char('\n')), StatusTone::Error);
  } else if (!plan.conflicts.isEmpty()) {
    setStatus(modelStatus_, tr("%n name conflict(s) with these prefixes: give each model its own prefix.", nullptr,
                               static_cast<int>(plan.conflicts.size())), StatusTone::Error);
  } else {
    setStatus(modelStatus_,
              tr("%1 models, %2 EPContext nodes, no name conflict.").arg(models_.size()).arg(plan.nodes.size()));
  }
}

void MergeWizard::refreshConnectionTable() {
  const bridge::MergePreview unconnected = bridge::computeMergePreview(models_, {});
  QStringList outputs, inputs;
  for (const auto& v : unconnected.outputs) outputs << v.name;
  for (const auto& v : unconnected.inputs) inputs << v.name;

  const int current = connectionTable_->currentRow();
  connectionTable_->setRowCount(static_cast<int>(connections_.size()));
  for (int row = 0; row < connections_.size(); ++row) {
    const bridge::MergeConnection& c = connections_[row];
    for (int column = 0; column < 2; ++column) {
      auto* combo = new QComboBox;
      QStringList names = column == 0 ? outputs : inputs;
      const QString& value = column == 0 ? c.from : c.to;
      // A name no model offers any more (a prefix changed) stays visible so the error next to it makes sense.
      if (!value.isEmpty() && !names.contains(value)) names.prepend(value);
      combo->addItems(names);
      combo->setCurrentIndex(static_cast<int>(names.indexOf(value)));
      connect(combo, &QComboBox::currentTextChanged, this, [this, row, column](const QString& text) {
        if (row >= connections_.size()) return;
        (column == 0 ? connections_[row].from : connections_[row].to) = text;
        // Deferred: this combo is replaced by the refresh and must not be deleted inside its own signal.
        QMetaObject::invokeMethod(this, &MergeWizard::planChanged, Qt::QueuedConnection);
      });
      connectionTable_->setCellWidget(row, column, combo);
    }
  }
  if (current >= 0 && current < connectionTable_->rowCount()) connectionTable_->selectRow(current);
  connectionTable_->setColumnWidth(0, 320);

  const bridge::MergePreview plan = preview();
  if (!plan.connectionErrors.isEmpty()) {
    setStatus(connectionStatus_, plan.connectionErrors.join(QLatin1Char('\n')), StatusTone::Error);
  } else if (connections_.isEmpty()) {
    setStatus(connectionStatus_, tr("No connections: the models run side by side in one session."));
  } else {
    setStatus(connectionStatus_, tr("%n connection(s), all valid.", nullptr, static_cast<int>(connections_.size())));
  }
}

void MergeWizard::refreshPreview() {
  const bridge::MergePreview plan = preview();
  auto modelName = [this](int index) {
    return index < models_.size() ? QFileInfo(models_[index].path).fileName() : QString();
  };
  // A name involved in a conflict is red wherever it appears, so the tables show what the list below says.
  auto named = [&](const QString& name) {
    QTableWidgetItem* item = readOnly(name);
    if (plan.conflictingNames.contains(name)) item->setForeground(kErrorColor);
    return item;
  };
  auto fillValues = [&](QTableWidget* table, const QList<bridge::MergeValue>& values) {
    table->setRowCount(static_cast<int>(values.size()));
    for (int row = 0; row < values.size(); ++row) {
      table->setItem(row, 0, named(values[row].name));
      table->setItem(row, 1, readOnly(values[row].type));
      table->setItem(row, 2, readOnly(modelName(values[row].model)));
    }
    table->resizeColumnsToContents();
  };
  fillValues(inputTable_, plan.inputs);
  fillValues(outputTable_, plan.outputs);
  nodeTable_->setRowCount(static_cast<int>(plan.nodes.size()));
  for (int row = 0; row < plan.nodes.size(); ++row) {
    const bridge::MergeNode& node = plan.nodes[row];
    nodeTable_->setItem(row, 0, named(node.name));
    nodeTable_->setItem(row, 1, named(node.partition));
    nodeTable_->setItem(row, 2, readOnly(modelName(node.model)));
    nodeTable_->setItem(row, 3, readOnly(node.inputs.join(QStringLiteral(", "))));
    nodeTable_->setItem(row, 4, readOnly(node.outputs.join(QStringLiteral(", "))));
  }
  nodeTable_->resizeColumnsToContents();

  conflictList_->clear();
  for (const QString& text : plan.problems + plan.conflicts + plan.connectionErrors) {
    auto* item = new QListWidgetItem(text);
    item->setForeground(kErrorColor);
    conflictList_->addItem(item);
  }
  if (plan.ok()) {
    auto* item = new QListWidgetItem(tr("No name conflicts: ready to write."));
    item->setForeground(kOkColor);
    conflictList_->addItem(item);
  }
}

void MergeWizard::refreshGraph() {
  graphLayout_->cancel();
  graphView_->clearGraph();
  mergedGraph_ = bridge::mergedGraphDocument(models_, connections_);
  if (!mergedGraph_) {
    setStatus(graphStatus_, tr("Add at least two readable compiled models."), StatusTone::Error);
    emit graphPreviewReady();
    return;
  }
  mergedVisible_ = mergedGraph_->visibleGraph({});  // every partition open: each EPContext node under its name
  setStatus(graphStatus_, tr("Laying out the merged graph..."));
  graphLayout_->start(mergedVisible_, *mergedGraph_);
}

void MergeWizard::onGraphLaidOut(const bridge::GraphLayoutResult& result) {
  if (!mergedGraph_) return;
  graphView_->showGraph(mergedGraph_, mergedVisible_, result, {});
  fitGraph();
  int epContextNodes = 0, otherNodes = 0;
  for (const auto& node : mergedGraph_->nodes()) {
    if (node.kind != bridge::GraphNode::Kind::Op) continue;
    ++(node.epContext ? epContextNodes : otherNodes);
  }
  const bridge::MergePreview plan = preview();
  QString text = tr("%1 EPContext node(s) from %2 models, %3 input(s), %4 output(s)")
                     .arg(epContextNodes)
                     .arg(models_.size())
                     .arg(plan.inputs.size())
                     .arg(plan.outputs.size());
  if (otherNodes > 0) text += tr(", %n other node(s) on the CPU (CPU fallback, connections)", nullptr, otherNodes);
  setStatus(graphStatus_, text + QLatin1Char('.'));
  emit graphPreviewReady();
}

void MergeWizard::fitGraph() {
  graphView_->fitAll();
  // A few nodes fit many times over: drawn at their natural size, centred, rather than blown up.
  if (graphView_->zoom() > 1) graphView_->zoomBy(1 / graphView_->zoom());
}

QString MergeWizard::graphStatus() const { return graphStatus_->text(); }

void MergeWizard::initializePage(int id) {
  QWizard::initializePage(id);
  planChanged();
  if (id == GraphPage) refreshGraph();
}

bool MergeWizard::validateCurrentPage() {
  // Next and Finish are disabled on incomplete pages; this also stops next() called programmatically.
  if (!currentPage()->isComplete()) return false;
  return QWizard::validateCurrentPage();
}

void MergeWizard::chooseOutput() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Merged ctx model"), outputPath(),
                                                    tr("ctx models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) setOutputPath(path);
}

void MergeWizard::setWriting(bool writing) {
  writing_ = writing;
  writeButton_->setEnabled(!writing);
  outputEdit_->setEnabled(!writing);
  if (QAbstractButton* back = button(QWizard::BackButton)) back->setEnabled(!writing);
  planPage(this, WritePage)->refresh();
}

void MergeWizard::write() {
  if (writing_) return;
  outcome_.reset();
  lastError_.clear();
  const QString output = outputPath();
  const bridge::MergePreview plan = preview();
  if (!plan.ok()) {
    onMergeFailed(tr("The plan is not ready: %1")
                      .arg((plan.problems + plan.conflicts + plan.connectionErrors).join(QStringLiteral("; "))));
    return;
  }
  if (output.isEmpty()) {
    onMergeFailed(tr("Give the merged model a file name (for example merged_ctx.onnx)."));
    return;
  }
  const QString absolute = QFileInfo(output).absoluteFilePath();
  setStatus(resultLabel_, tr("Writing %1...").arg(QFileInfo(absolute).fileName()));
  openButton_->hide();
  setWriting(true);
  worker_->merge(models_, absolute, connections_);
}

void MergeWizard::onMerged(const bridge::MergeOutcome& outcome) {
  outcome_ = outcome;
  setWriting(false);
  const ContextBinaryInfo& binary = outcome.result.binary;
  // What the inputs stored separately, to show what merging saved on top of each binary's own deduplication.
  uint64_t inputWeightBytes = 0;
  for (const auto& m : models_) {
    if (!m.info) continue;
    for (const auto& [key, info] : m.info->binaries) inputWeightBytes += info.weightBytes;
  }
  const auto [saved, percent] = bridge::dedupSavings(binary);
  QStringList lines;
  lines << tr("<b>Wrote</b> %1 EPContext node(s):").arg(outcome.result.epContextNodes);
  for (const QString& file : outcome.filesWritten) {
    lines << QStringLiteral("&nbsp;&nbsp;%1 (%2)")
                 .arg(file.toHtmlEscaped(), bridge::formatByteSize(QFileInfo(file).size()));
  }
  lines << tr("Combined binary: %1 weight blob(s), %2 stored for %3 reference(s) of %4; deduplication saved %5 (%6%).")
               .arg(binary.weightBlobs)
               .arg(bridge::formatByteSize(static_cast<int64_t>(binary.weightBytes)))
               .arg(binary.weightReferences)
               .arg(bridge::formatByteSize(static_cast<int64_t>(binary.weightBytesReferenced)))
               .arg(bridge::formatByteSize(static_cast<int64_t>(saved)))
               .arg(percent, 0, 'f', 1);
  if (inputWeightBytes > 0) {
    lines << tr("The input binaries stored %1 of weights together; the merged one stores %2.")
                 .arg(bridge::formatByteSize(static_cast<int64_t>(inputWeightBytes)),
                      bridge::formatByteSize(static_cast<int64_t>(binary.weightBytes)));
  }
  setStatus(resultLabel_, lines.join(QStringLiteral("<br>")));
  planPage(this, WritePage)->refresh();
  writtenPath_ = QString::fromStdString(outcome.result.outputModelPath);
  openButton_->show();
  emit merged(writtenPath_);
}

void MergeWizard::onMergeFailed(const QString& message) {
  lastError_ = message;
  openButton_->hide();
  setWriting(false);
  // The engine checks everything before writing and writes through a transaction: nothing was written.
  setStatus(resultLabel_, tr("Nothing was written: %1").arg(message), StatusTone::Error);
  emit mergeFailed(message);
}

QString MergeWizard::resultText() const { return resultLabel_->text(); }

}  // namespace kiln::studio
