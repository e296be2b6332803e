#include "binary_inspector.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "status_label.h"
#include "value_format.h"
#include "table_widgets.h"

namespace kiln::studio {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

QString joined(const std::vector<std::string>& items, const QString& separator = QStringLiteral(", ")) {
  QStringList list;
  for (const auto& item : items) list << qs(item);
  return list.join(separator);
}

QTableWidget* makeTable(const QString& objectName, const QStringList& headers) {
  QTableWidget* table = makeListTable(objectName, headers);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  return table;
}

QTableWidgetItem* cell(const QString& text, const QString& tooltip = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setToolTip(tooltip.isEmpty() ? text : tooltip);
  return item;
}

QString joined(const QStringList& items) { return items.isEmpty() ? QStringLiteral("-") : items.join(QStringLiteral(", ")); }

QTableWidgetItem* numberCell(qint64 value) {
  auto* item = new QTableWidgetItem(QString::number(value));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

void setRow(QTableWidget* table, int row, const QList<QTableWidgetItem*>& items) {
  for (int column = 0; column < items.size(); ++column) table->setItem(row, column, items[column]);
}

// Columns as wide as their contents, the free-text ones capped so one long list does not hide the others.
void fitColumns(QTableWidget* table, int cap = 320) {
  table->resizeColumnsToContents();
  for (int column = 0; column + 1 < table->columnCount(); ++column) {
    table->setColumnWidth(column, std::min(table->columnWidth(column), cap));
  }
}

QColor verdictColor(const QString& verdict) {
  if (verdict == QLatin1String("optimal")) return QColor(0x1b, 0x7f, 0x3b);
  return statusToneColor(verdict == QLatin1String("compatible") ? StatusTone::Warning : StatusTone::Error);
}

// Roles of the verdict target combo's items.
constexpr int kSelectorRole = Qt::UserRole;      // device selector, or the profile path
constexpr int kKindRole = Qt::UserRole + 1;      // "device", "profile" or "choose"

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

BinaryInspector::BinaryInspector(QWidget* parent)
    : QWidget(parent),
      worker_(new bridge::BinaryInspectionWorker(this)),
      pathEdit_(new QLineEdit),
      summaryLabel_(makeStatusLabel(QStringLiteral("summaryLabel"))),
      binaryCombo_(new QComboBox),
      binaryLabel_(new QLabel(tr("Binary:"))),
      tabs_(new QTabWidget),
      nodesTab_(new QWidget),
      nodeTable_(makeTable(QStringLiteral("nodeTable"),
                           {tr("Node"), tr("Graph"), tr("Source"), tr("Main"), tr("Embed"), tr("Partition"),
                            tr("ep_cache_context"), tr("Problem")})),
      headerTable_(makeTable(QStringLiteral("headerTable"), {tr("Field"), tr("Value"), tr("Meaning")})),
      sectionTable_(makeTable(QStringLiteral("sectionTable"),
                              {tr("Kind"), tr("Offset"), tr("Size"), tr("Items"), tr("xxHash3")})),
      sectionCaption_(new QLabel),
      hexView_(new HexView),
      graphTable_(makeTable(QStringLiteral("graphTable"),
                            {tr("Name"), tr("EP"), tr("Nodes"), tr("Host nodes"), tr("Initializers"),
                             tr("SPIR-V modules"), tr("Inputs"), tr("Outputs"), tr("Op types")})),
      spirvSummary_(new QLabel),
      spirvTable_(makeTable(QStringLiteral("spirvTable"),
                            {tr("Shader variant"), tr("Size"), tr("Graphs"), tr("EPContext nodes"), tr("Used by nodes")})),
      disassembly_(new QPlainTextEdit),
      usersList_(new QListWidget),
      usersCaption_(new QLabel),
      weightsTable_(makeTable(QStringLiteral("weightsTable"), {tr("Quantity"), tr("Value")})),
      deviceCombo_(new QComboBox),
      verdictLabel_(new QLabel),
      againstLabel_(new QLabel),
      reasonsCaption_(new QLabel(tr("Reasons it is not optimal:"))),
      reasonsList_(new QListWidget) {
  // File row.
  pathEdit_->setObjectName(QStringLiteral("pathEdit"));
  pathEdit_->setPlaceholderText(tr("A context binary (*_vulkan.bin) or a compiled model (*_ctx.onnx)"));
  auto* openButton = new QPushButton(tr("Open..."));
  connect(openButton, &QPushButton::clicked, this, &BinaryInspector::chooseFile);
  connect(pathEdit_, &QLineEdit::returnPressed, this, [this] {
    if (!pathEdit_->text().trimmed().isEmpty()) inspect(pathEdit_->text().trimmed());
  });
  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(new QLabel(tr("File:")));
  fileRow->addWidget(pathEdit_, 1);
  fileRow->addWidget(openButton);

  binaryCombo_->setObjectName(QStringLiteral("binaryCombo"));
  binaryCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(binaryCombo_, &QComboBox::activated, this, &BinaryInspector::showBinary);
  auto* binaryRow = new QHBoxLayout;
  binaryRow->addWidget(binaryLabel_);
  binaryRow->addWidget(binaryCombo_);
  binaryRow->addStretch(1);
  binaryLabel_->hide();
  binaryCombo_->hide();

  // EPContext nodes (ctx models only).
  auto* nodesLayout = new QVBoxLayout(nodesTab_);
  nodesLayout->setContentsMargins(0, 0, 0, 0);
  nodesLayout->addWidget(nodeTable_);

  // Sections: the table above, the selected section's bytes below.
  sectionCaption_->setObjectName(QStringLiteral("sectionCaption"));
  sectionCaption_->setWordWrap(true);
  auto* hexPane = new QWidget;
  auto* hexLayout = new QVBoxLayout(hexPane);
  hexLayout->setContentsMargins(0, 0, 0, 0);
  hexLayout->addWidget(sectionCaption_);
  hexLayout->addWidget(hexView_, 1);
  auto* sectionSplitter = new QSplitter(Qt::Vertical);
  sectionSplitter->addWidget(sectionTable_);
  sectionSplitter->addWidget(hexPane);
  sectionSplitter->setStretchFactor(1, 2);
  connect(sectionTable_, &QTableWidget::itemSelectionChanged, this, &BinaryInspector::onSectionSelected);

  // SPIR-V.
  auto* spirvTab = new QWidget;
  auto* spirvLayout = new QVBoxLayout(spirvTab);
  spirvLayout->setContentsMargins(0, 4, 0, 0);
  spirvSummary_->setWordWrap(true);
  disassembly_->setObjectName(QStringLiteral("spirvDisassembly"));
  disassembly_->setReadOnly(true);
  disassembly_->setLineWrapMode(QPlainTextEdit::NoWrap);
  disassembly_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  disassembly_->setPlaceholderText(tr("Select a pipeline to see its SPIR-V disassembly"));
  // Below the table: the selected pipeline's nodes (click one to select it in the graph) beside its disassembly.
  usersList_->setObjectName(QStringLiteral("pipelineUsersList"));
  usersCaption_->setObjectName(QStringLiteral("pipelineUsersCaption"));
  usersCaption_->setWordWrap(true);
  usersCaption_->setText(tr("Nodes that use the selected pipeline"));
  auto* usersPane = new QWidget;
  auto* usersLayout = new QVBoxLayout(usersPane);
  usersLayout->setContentsMargins(0, 0, 0, 0);
  usersLayout->addWidget(usersCaption_);
  usersLayout->addWidget(usersList_, 1);
  connect(usersList_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) { activatePipelineUser(usersList_->row(item)); });
  connect(usersList_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) { activatePipelineUser(usersList_->row(item)); });
  auto* detailSplitter = new QSplitter(Qt::Horizontal);
  detailSplitter->addWidget(usersPane);
  detailSplitter->addWidget(disassembly_);
  detailSplitter->setStretchFactor(1, 3);
  auto* spirvSplitter = new QSplitter(Qt::Vertical);
  spirvSplitter->addWidget(spirvTable_);
  spirvSplitter->addWidget(detailSplitter);
  spirvSplitter->setStretchFactor(1, 2);
  spirvLayout->addWidget(spirvSummary_);
  spirvLayout->addWidget(spirvSplitter, 1);
  connect(spirvTable_, &QTableWidget::itemSelectionChanged, this, &BinaryInspector::onPipelineSelected);

  // Verdict.
  deviceCombo_->setObjectName(QStringLiteral("deviceCombo"));
  deviceCombo_->addItem(tr("Default device (the one a compile picks)"), QString());
  deviceCombo_->setItemData(0, QStringLiteral("device"), kKindRole);
  deviceCombo_->addItem(tr("Device profile..."), QString());
  deviceCombo_->setItemData(1, QStringLiteral("choose"), kKindRole);
  connect(deviceCombo_, &QComboBox::activated, this, &BinaryInspector::onTargetChosen);
  verdictLabel_->setObjectName(QStringLiteral("verdictLabel"));
  QFont big = verdictLabel_->font();
  big.setPointSizeF(big.pointSizeF() * 1.6);
  big.setBold(true);
  verdictLabel_->setFont(big);
  againstLabel_->setWordWrap(true);
  againstLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  reasonsList_->setObjectName(QStringLiteral("reasonsList"));
  reasonsList_->setWordWrap(true);
  auto* verdictTab = new QWidget;
  auto* verdictLayout = new QVBoxLayout(verdictTab);
  auto* targetRow = new QHBoxLayout;
  targetRow->addWidget(new QLabel(tr("Against:")));
  targetRow->addWidget(deviceCombo_, 1);
  verdictLayout->addLayout(targetRow);
  verdictLayout->addWidget(verdictLabel_);
  verdictLayout->addWidget(againstLabel_);
  verdictLayout->addWidget(reasonsCaption_);
  verdictLayout->addWidget(reasonsList_, 1);

  tabs_->setObjectName(QStringLiteral("inspectorTabs"));
  tabs_->addTab(headerTable_, tr("Header"));
  tabs_->addTab(sectionSplitter, tr("Sections"));
  tabs_->addTab(graphTable_, tr("Graphs"));
  tabs_->addTab(spirvTab, tr("SPIR-V"));
  tabs_->addTab(weightsTable_, tr("Weights"));
  tabs_->addTab(verdictTab, tr("Verdict"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(fileRow);
  layout->addWidget(summaryLabel_);
  layout->addLayout(binaryRow);
  layout->addWidget(tabs_, 1);

  connect(worker_, &bridge::BinaryInspectionWorker::inspected, this, &BinaryInspector::onInspected);
  connect(worker_, &bridge::BinaryInspectionWorker::inspectFailed, this, &BinaryInspector::onFailed);
  connect(worker_, &bridge::BinaryInspectionWorker::verdictReady, this, &BinaryInspector::showVerdict);
  connect(worker_, &bridge::BinaryInspectionWorker::verdictFailed, this, &BinaryInspector::showVerdictError);
  connect(worker_, &bridge::BinaryInspectionWorker::devicesListed, this, &BinaryInspector::onDevicesListed);
  connect(worker_, &bridge::BinaryInspectionWorker::devicesFailed, this, [this](const QString& message) {
    deviceCombo_->setToolTip(tr("No Vulkan device listed: %1").arg(message));
    emit devicesListed();
  });
  // Enumerating Vulkan devices creates an instance (tens of ms, more with a real GPU driver): off the UI thread.
  worker_->listDevices();
  summaryLabel_->setText(tr("Open a context binary or a compiled ctx model."));
}

BinaryInspector::~BinaryInspector() = default;

void BinaryInspector::chooseFile() {
  const QString start = inspection_ ? QFileInfo(inspection_->path).absolutePath() : QString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open context binary or ctx model"), start,
      tr("Kiln binaries and ctx models (*.bin *.onnx);;Context binaries (*.bin);;ctx models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) inspect(path);
}

void BinaryInspector::inspect(const QString& path) {
  pathEdit_->setText(path);
  setStatus(summaryLabel_, tr("Reading %1...").arg(QFileInfo(path).fileName()));
  worker_->inspect(path);
}

void BinaryInspector::onFailed(const QString& path, const QString& message) {
  lastError_ = message;
  // The previous file's tabs stay, but the summary says plainly that this file could not be read.
  setStatus(summaryLabel_, tr("Could not read %1: %2").arg(QFileInfo(path).fileName(), message),
            StatusTone::Error);
  emit failed(message);
}

void BinaryInspector::onInspected(const bridge::Inspection& inspection) {
  lastError_.clear();
  inspection_ = inspection;
  setStatusTone(summaryLabel_, StatusTone::Normal);
  setStatusTone(spirvSummary_, StatusTone::Normal);
  if (!inspection.problem.isEmpty()) {
    // A damaged binary: what reads is shown (the failing part marked), the summary says it failed and where.
    lastError_ = inspection.problem;
    const ContextBinaryDiagnosis& damage = *inspection.binaries.first().damage;
    if (const int at = tabs_->indexOf(nodesTab_); at >= 0) tabs_->removeTab(at);
    nodeTable_->setRowCount(0);
    binaryCombo_->clear();
    binaryLabel_->hide();
    binaryCombo_->hide();
    setStatusTone(summaryLabel_, StatusTone::Error);
    summaryLabel_->setText(tr("Could not read %1: %2\nPartial view: the %3 at bytes [%4, +%5) fails; what reads is shown.")
                               .arg(QFileInfo(inspection.path).fileName(), inspection.problem, bridge::failedPartName(damage))
                               .arg(damage.failedOffset)
                               .arg(damage.failedSize));
    binaryIndex_ = -1;
    showBinary(0);
    emit failed(inspection.problem);
    return;
  }
  const QString name = QFileInfo(inspection.path).fileName();
  if (inspection.ctxModel) {
    const EpContextModelInfo& model = *inspection.model;
    QString text = tr("%1: compiled model, %2 EPContext node(s), %3 other node(s), %4 binary(ies)")
                       .arg(name)
                       .arg(model.nodes.size())
                       .arg(model.otherNodes)
                       .arg(inspection.binaries.size());
    for (const auto& problem : model.problems) text += QStringLiteral("\n") + tr("Problem: %1").arg(qs(problem));
    summaryLabel_->setText(text);
    showNodes(model);
    if (tabs_->indexOf(nodesTab_) < 0) tabs_->insertTab(0, nodesTab_, tr("EPContext nodes"));
  } else {
    const ContextBinaryInfo& info = inspection.binaries.first().info;
    summaryLabel_->setText(tr("%1: Kiln context binary, format %2, %3, compiled for %4")
                               .arg(name, qs(info.formatVersion), bridge::formatByteSize(static_cast<int64_t>(info.fileSize)),
                                    qs(info.deviceName)));
    if (const int at = tabs_->indexOf(nodesTab_); at >= 0) tabs_->removeTab(at);
    nodeTable_->setRowCount(0);  // a bare binary has no EPContext nodes: the previous model's rows must go
  }

  binaryCombo_->clear();
  for (const auto& binary : inspection.binaries) {
    binaryCombo_->addItem(binary.embedded ? binary.key : QFileInfo(binary.key).fileName());
    binaryCombo_->setItemData(binaryCombo_->count() - 1, binary.key, Qt::ToolTipRole);
  }
  const bool several = inspection.ctxModel && !inspection.binaries.isEmpty();
  binaryLabel_->setVisible(several);
  binaryCombo_->setVisible(several);
  binaryIndex_ = -1;
  showBinary(inspection.binaries.isEmpty() ? -1 : 0);
  emit inspected();
}

void BinaryInspector::showNodes(const EpContextModelInfo& model) {
  nodeTable_->setRowCount(static_cast<int>(model.nodes.size()));
  int row = 0;
  for (const auto& node : model.nodes) {
    auto* problem = cell(qs(node.problem));
    problem->setForeground(QColor(0xc6, 0x28, 0x28));
    setRow(nodeTable_, row++,
           {cell(qs(node.name)), cell(qs(node.graph)),
            cell(node.source.empty() ? tr("(none)") : qs(node.source) + (node.vulkan ? QString() : tr(" (foreign)"))),
            numberCell(node.mainContext), numberCell(node.embedMode), cell(qs(node.partitionName)),
            cell(qs(node.cacheContext)), problem});
  }
  fitColumns(nodeTable_);
}

void BinaryInspector::selectBinary(int index) {
  if (index < 0 || index >= binaryCombo_->count()) return;
  binaryCombo_->setCurrentIndex(index);
  showBinary(index);
}

void BinaryInspector::showBinary(int index) {
  binaryIndex_ = index;
  headerTable_->setRowCount(0);
  sectionTable_->setRowCount(0);
  graphTable_->setRowCount(0);
  spirvTable_->setRowCount(0);
  disassembly_->clear();
  usersList_->clear();
  usersCaption_->setText(tr("Nodes that use the selected pipeline"));
  weightsTable_->setRowCount(0);
  hexView_->showMessage(tr("Select a section to see its bytes"));
  sectionCaption_->clear();
  verdictLabel_->clear();
  againstLabel_->clear();
  reasonsList_->clear();
  reasonsCaption_->setText(tr("Reasons it is not optimal:"));
  if (!inspection_ || index < 0 || index >= inspection_->binaries.size()) {
    if (inspection_ && inspection_->binaries.isEmpty()) {
      // The reasons (a missing or corrupt .bin, a graph the binary lacks) are the nodes' problems: say them here.
      setStatus(verdictLabel_, tr("No binary could be followed"), StatusTone::Error);
      againstLabel_->setText(tr("The EPContext nodes name no binary this studio could read, so there is nothing "
                                "to judge against a device."));
      reasonsCaption_->setText(tr("Why no binary was followed:"));
      if (inspection_->model) reasonsList_->addItems(bridge::unfollowedBinaryReasons(*inspection_->model));
    }
    return;
  }
  const bridge::InspectedBinary& binary = inspection_->binaries[index];
  const ContextBinaryInfo& info = binary.info;

  const QList<bridge::HeaderField> fields = bridge::headerFields(info);
  headerTable_->setRowCount(static_cast<int>(fields.size()));
  for (int row = 0; row < fields.size(); ++row) {
    setRow(headerTable_, row, {cell(fields[row].field), cell(fields[row].value), cell(fields[row].meaning)});
  }
  fitColumns(headerTable_, 360);

  sectionTable_->setRowCount(static_cast<int>(info.sections.size()));
  int row = 0;
  for (const auto& s : info.sections) {
    auto* kind = cell(qs(s.kind), bridge::sectionMeaning(s.kind));
    setRow(sectionTable_, row++,
           {kind, numberCell(static_cast<qint64>(s.offset)), numberCell(static_cast<qint64>(s.size)),
            numberCell(static_cast<qint64>(s.items)), cell(qs(s.hash))});
  }
  fitColumns(sectionTable_);

  graphTable_->setRowCount(static_cast<int>(info.graphs.size()));
  row = 0;
  for (const auto& g : info.graphs) {
    setRow(graphTable_, row++,
           {cell(qs(g.name)), cell(qs(g.executionProvider)), numberCell(g.nodes), numberCell(g.hostNodes),
            numberCell(g.initializers), numberCell(g.spirvModules), cell(joined(g.inputs)), cell(joined(g.outputs)),
            cell(joined(g.opTypes, QStringLiteral(" ")))});
  }
  fitColumns(graphTable_, 240);

  showPipelines(binary);

  const auto [saved, percent] = bridge::dedupSavings(info);
  const QList<std::pair<QString, QString>> weights = {
      {tr("Blobs stored"), QString::number(info.weightBlobs)},
      {tr("References"), QString::number(info.weightReferences)},
      {tr("Bytes stored"), QStringLiteral("%1 (%2)").arg(info.weightBytes).arg(bridge::formatByteSize(static_cast<int64_t>(info.weightBytes)))},
      {tr("Bytes referenced"), QStringLiteral("%1 (%2)").arg(info.weightBytesReferenced).arg(bridge::formatByteSize(static_cast<int64_t>(info.weightBytesReferenced)))},
      {tr("Saved by deduplication"),
       QStringLiteral("%1 (%2%)").arg(bridge::formatByteSize(static_cast<int64_t>(saved))).arg(percent, 0, 'f', 1)},
  };
  weightsTable_->setRowCount(static_cast<int>(weights.size()));
  for (int i = 0; i < weights.size(); ++i) setRow(weightsTable_, i, {cell(weights[i].first), cell(weights[i].second)});
  fitColumns(weightsTable_);

  if (!binary.sourceProblem.isEmpty()) hexView_->showMessage(tr("Bytes not available: %1").arg(binary.sourceProblem));
  if (binary.damage) {
    showDamage(binary);
    return;  // a binary that fails validation has no verdict but "unreadable": showDamage says why
  }
  requestVerdict();
}

void BinaryInspector::showPipelines(const bridge::InspectedBinary& binary) {
  const ContextBinaryInfo& info = binary.info;
  QString summary = tr("%1 SPIR-V pipeline(s), %2 in all, each stored once for all graphs. Select one for its "
                       "disassembly and the nodes that use it; click a node to select it in the graph.")
                        .arg(binary.pipelines.size())
                        .arg(bridge::formatByteSize(static_cast<int64_t>(info.spirvBytes)));
  if (!info.pipelineUsersRecorded && !binary.pipelines.isEmpty()) summary += QStringLiteral("\n") + bridge::noPipelineUsersNote();
  spirvSummary_->setText(summary);
  spirvTable_->setRowCount(static_cast<int>(binary.pipelines.size()));
  int row = 0;
  for (const auto& pipeline : binary.pipelines) {
    auto* size = numberCell(pipeline.bytes());
    size->setText(bridge::formatByteSize(pipeline.bytes()));
    size->setToolTip(tr("%1 bytes, %2 words").arg(pipeline.bytes()).arg(pipeline.words.size()));
    QStringList users;
    for (const auto& user : pipeline.users) users << user.displayName();
    auto* usedBy = info.pipelineUsersRecorded ? cell(QStringLiteral("%1: %2").arg(users.size()).arg(joined(users)))
                                              : cell(tr("not recorded"), bridge::noPipelineUsersNote());
    setRow(spirvTable_, row++,
           {cell(pipeline.key), size, cell(joined(pipeline.graphs)),
            cell(pipeline.nodes.isEmpty() ? tr("(open the ctx model to see its nodes)") : joined(pipeline.nodes)), usedBy});
  }
  fitColumns(spirvTable_, 420);
}

QStringList BinaryInspector::pipelineUserNames() const {
  QStringList names;
  for (int i = 0; i < usersList_->count(); ++i) {
    if (usersList_->item(i)->flags() & Qt::ItemIsEnabled) names << usersList_->item(i)->text();
  }
  return names;
}

QString BinaryInspector::pipelineUsersNote() const {
  if (!inspection_ || binaryIndex_ < 0 || binaryIndex_ >= inspection_->binaries.size()) return {};
  return inspection_->binaries[binaryIndex_].info.pipelineUsersRecorded ? QString() : bridge::noPipelineUsersNote();
}

void BinaryInspector::activatePipelineUser(int row) {
  if (!inspection_ || binaryIndex_ < 0 || binaryIndex_ >= inspection_->binaries.size()) return;
  const bridge::InspectedBinary& binary = inspection_->binaries[binaryIndex_];
  const int pipeline = spirvTable_->currentRow();
  if (pipeline < 0 || pipeline >= binary.pipelines.size()) return;
  const QList<bridge::PipelineUser>& users = binary.pipelines[pipeline].users;
  if (row < 0 || row >= users.size()) return;
  emit nodeRequested(users[row].graph, users[row].node, users[row].epContextNode);
}

void BinaryInspector::selectPipeline(int row) {
  spirvTable_->selectRow(row);
  onPipelineSelected();
  for (int i = 0; i < tabs_->count(); ++i) {
    if (tabs_->tabText(i) == tr("SPIR-V")) tabs_->setCurrentIndex(i);
  }
}

QString BinaryInspector::disassemblyText() const { return disassembly_->toPlainText(); }

void BinaryInspector::onPipelineSelected() {
  if (!inspection_ || binaryIndex_ < 0) return;
  const bridge::InspectedBinary& binary = inspection_->binaries[binaryIndex_];
  const int row = spirvTable_->currentRow();
  if (row < 0 || row >= binary.pipelines.size()) return;
  const bridge::SpirvPipeline& pipeline = binary.pipelines[row];
  usersList_->clear();
  if (!binary.info.pipelineUsersRecorded) {
    usersCaption_->setText(bridge::noPipelineUsersNote());
  } else {
    usersCaption_->setText(tr("%n node(s) use this pipeline (click one to select it in the graph):", nullptr,
                              static_cast<int>(pipeline.users.size())));
    for (const auto& user : pipeline.users) {
      auto* item = new QListWidgetItem(user.displayName(), usersList_);
      item->setToolTip(user.epContextNode.isEmpty()
                           ? tr("Node %1 of partition %2").arg(user.nodeIndex).arg(user.graph)
                           : tr("Node %1 of partition %2, run by EPContext node %3").arg(user.nodeIndex).arg(user.graph, user.epContextNode));
    }
  }
  // One module disassembles in milliseconds: on demand, on this thread.
  auto text = bridge::disassembleSpirv(pipeline.words);
  disassembly_->setPlainText(text.isOk() ? *text : QString::fromStdString(text.status().toString()));
}

void BinaryInspector::showDamage(const bridge::InspectedBinary& binary) {
  const ContextBinaryDiagnosis& damage = *binary.damage;
  const QColor bad(0xc6, 0x28, 0x28);
  const QString where = tr("%1 [%2, +%3)").arg(bridge::failedPartName(damage)).arg(damage.failedOffset).arg(damage.failedSize);
  // The section table marks every section that fails, with its own reason.
  for (int row = 0; row < sectionTable_->rowCount() && row < static_cast<int>(damage.sections.size()); ++row) {
    const std::string& problem = damage.sections[static_cast<size_t>(row)].problem;
    for (int column = 0; column < sectionTable_->columnCount(); ++column) {
      QTableWidgetItem* item = sectionTable_->item(row, column);
      if (!item) continue;
      item->setForeground(problem.empty() ? palette().color(QPalette::Text) : bad);
      if (!problem.empty()) item->setToolTip(tr("Fails: %1").arg(qs(problem)));
    }
    if (!problem.empty()) sectionTable_->item(row, 0)->setText(tr("%1 \u2717 damaged").arg(qs(damage.sections[static_cast<size_t>(row)].section.kind)));
  }
  fitColumns(sectionTable_);
  const QString notReadable = tr("Not readable: the binary fails in its %1 (%2)").arg(where, qs(damage.problem));
  if (!damage.headerReadable) {
    headerTable_->setRowCount(1);
    setRow(headerTable_, 0, {cell(tr("Header")), cell(tr("\u2717 damaged")), cell(notReadable)});
    headerTable_->item(0, 1)->setForeground(bad);
    // The header's bytes stay visible: they are where the failure is.
    sectionCaption_->setText(tr("<b>%1</b> \u2014 the bytes that fail:").arg(where.toHtmlEscaped()));
    hexView_->setRange(binary.source, static_cast<qint64>(damage.failedOffset), static_cast<qint64>(damage.failedSize));
  }
  graphTable_->setRowCount(0);
  weightsTable_->setRowCount(0);
  setStatus(spirvSummary_, notReadable, StatusTone::Error);
  setStatus(verdictLabel_, tr("unreadable"), StatusTone::Error);
  againstLabel_->setText(notReadable);
  reasonsList_->clear();
  reasonsCaption_->setText(tr("Each part of the binary:"));
  // Sections that read are listed so the user sees the damage is local.
  for (const auto& check : damage.sections) {
    reasonsList_->addItem(check.problem.empty() ? tr("%1 section: intact").arg(qs(check.section.kind))
                                                : tr("%1 section: %2").arg(qs(check.section.kind), qs(check.problem)));
  }
  // The tab that shows the failure comes to the front: the failing section's bytes, or the header's.
  for (int i = 0; i < tabs_->count(); ++i) {
    if (tabs_->tabText(i) == (damage.headerReadable ? tr("Sections") : tr("Header"))) tabs_->setCurrentIndex(i);
  }
  if (damage.headerReadable) {
    // Open the failing section's bytes straight away.
    for (int row = 0; row < static_cast<int>(damage.sections.size()); ++row) {
      if (!damage.sections[static_cast<size_t>(row)].problem.empty()) {
        sectionTable_->selectRow(row);
        break;
      }
    }
  }
}

void BinaryInspector::selectSection(int row) {
  sectionTable_->selectRow(row);
  onSectionSelected();
}

void BinaryInspector::onSectionSelected() {
  if (!inspection_ || binaryIndex_ < 0) return;
  const bridge::InspectedBinary& binary = inspection_->binaries[binaryIndex_];
  const int row = sectionTable_->currentRow();
  if (row < 0 || row >= static_cast<int>(binary.info.sections.size())) return;
  const ContextBinarySection& section = binary.info.sections[static_cast<size_t>(row)];
  sectionCaption_->setText(tr("<b>%1</b>: %2 bytes at offset %3 \u2014 %4")
                               .arg(qs(section.kind))
                               .arg(section.size)
                               .arg(section.offset)
                               .arg(bridge::sectionMeaning(section.kind).toHtmlEscaped()));
  if (!binary.sourceProblem.isEmpty()) {
    hexView_->showMessage(tr("Bytes not available: %1").arg(binary.sourceProblem));
    return;
  }
  hexView_->setRange(binary.source, static_cast<qint64>(section.offset), static_cast<qint64>(section.size));
}

void BinaryInspector::onDevicesListed(const QList<VulkanDeviceDescription>& devices) {
  // Devices go between "Default device" and the profile entries, replacing an earlier listing.
  for (int i = deviceCombo_->count() - 1; i >= 0; --i) {
    if (i > 0 && deviceCombo_->itemData(i, kKindRole).toString() == QLatin1String("device")) deviceCombo_->removeItem(i);
  }
  int at = 1;
  for (const auto& device : devices) {
    deviceCombo_->insertItem(at, tr("%1: %2 (%3)").arg(device.index).arg(qs(device.name), QString::fromLatin1(vulkanDeviceTypeName(device.type))),
                             QString::number(device.index));
    deviceCombo_->setItemData(at, QStringLiteral("device"), kKindRole);
    ++at;
  }
  emit devicesListed();
}

void BinaryInspector::onTargetChosen(int index) {
  if (deviceCombo_->itemData(index, kKindRole).toString() == QLatin1String("choose")) {
    const QString profile = QFileDialog::getOpenFileName(this, tr("Choose a device profile"), lastProfile_,
                                                         tr("Device profiles (*.json);;All files (*)"));
    if (profile.isEmpty()) {
      deviceCombo_->setCurrentIndex(0);
    } else {
      checkAgainst({}, profile);
      return;
    }
  }
  requestVerdict();
}

void BinaryInspector::checkAgainst(const QString& deviceSelector, const QString& profilePath) {
  if (!profilePath.isEmpty()) {
    lastProfile_ = profilePath;
    int found = deviceCombo_->findData(profilePath, kSelectorRole);
    if (found < 0 || deviceCombo_->itemData(found, kKindRole).toString() != QLatin1String("profile")) {
      found = deviceCombo_->count() - 1;  // before "Device profile..."
      deviceCombo_->insertItem(found, tr("Profile: %1").arg(QFileInfo(profilePath).fileName()), profilePath);
      deviceCombo_->setItemData(found, QStringLiteral("profile"), kKindRole);
      deviceCombo_->setItemData(found, profilePath, Qt::ToolTipRole);
    }
    deviceCombo_->setCurrentIndex(found);
  } else {
    const int found = deviceCombo_->findData(deviceSelector, kSelectorRole);
    if (found >= 0 && deviceCombo_->itemData(found, kKindRole).toString() == QLatin1String("device")) {
      deviceCombo_->setCurrentIndex(found);
    } else {
      // A name substring the combo does not list: judged as asked, shown as its own entry.
      const int at = deviceCombo_->count() - 1;
      deviceCombo_->insertItem(at, tr("Device \"%1\"").arg(deviceSelector), deviceSelector);
      deviceCombo_->setItemData(at, QStringLiteral("device"), kKindRole);
      deviceCombo_->setCurrentIndex(at);
    }
  }
  requestVerdict();
}

void BinaryInspector::requestVerdict() {
  if (!inspection_ || binaryIndex_ < 0 || binaryIndex_ >= inspection_->binaries.size()) return;
  const int index = deviceCombo_->currentIndex();
  const QString kind = deviceCombo_->itemData(index, kKindRole).toString();
  if (kind == QLatin1String("choose")) return;
  const QString selector = deviceCombo_->itemData(index, kSelectorRole).toString();
  setStatus(verdictLabel_, tr("Judging..."));
  againstLabel_->clear();
  reasonsList_->clear();
  worker_->judge(inspection_->binaries[binaryIndex_], kind == QLatin1String("profile") ? QString() : selector,
                 kind == QLatin1String("profile") ? selector : QString());
}

void BinaryInspector::showVerdict(const CompatibilityVerdict& verdict) {
  const QString name = QString::fromLatin1(compatibilityName(verdict.compatibility));
  verdictLabel_->setText(name);
  verdictLabel_->setStyleSheet(QStringLiteral("color: %1;").arg(verdictColor(name).name()));
  againstLabel_->setText(tr("against %1").arg(qs(verdict.against)));
  reasonsList_->clear();
  for (const auto& reason : verdict.reasons) reasonsList_->addItem(qs(reason));
  if (verdict.reasons.empty()) reasonsList_->addItem(tr("(none: the binary's driver cache is used as is)"));
  emit verdictShown();
}

void BinaryInspector::showVerdictError(const QString& message) {
  setStatus(verdictLabel_, tr("no verdict"), StatusTone::Error);
  againstLabel_->setText(message);
  reasonsList_->clear();
  emit verdictShown();
}

QString BinaryInspector::verdictText() const { return verdictLabel_->text(); }

QStringList BinaryInspector::verdictReasons() const {
  QStringList reasons;
  if (!inspection_ || verdictLabel_->text() == tr("no verdict")) return reasons;
  for (int i = 0; i < reasonsList_->count(); ++i) reasons << reasonsList_->item(i)->text();
  // The placeholder line of an optimal verdict is not a reason.
  if (verdictLabel_->text() == QLatin1String("optimal")) reasons.clear();
  return reasons;
}

}  // namespace kiln::studio
