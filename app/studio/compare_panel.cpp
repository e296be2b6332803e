#include "compare_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "status_label.h"
#include "table_widgets.h"

namespace kiln::studio {

namespace {

constexpr int kTopNodes = 20;
const QColor kFail(0xc6, 0x28, 0x28), kPass(0x2e, 0x7d, 0x32);

QTableWidgetItem* cell(const QString& text) { return new QTableWidgetItem(text); }

// Sorts by the exact value (Qt::UserRole), not by its text ("10 ms" after "9 ms").
class NumberItem : public QTableWidgetItem {
 public:
  using QTableWidgetItem::QTableWidgetItem;
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

// A number cell: `text` shown, the exact value in Qt::UserRole and the tooltip.
QTableWidgetItem* numberCell(double value, const QString& text) {
  auto* item = new NumberItem(text);
  item->setData(Qt::UserRole, value);
  item->setData(Qt::ToolTipRole, QString::number(value, 'g', 17));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QString g(double value) { return QString::number(value, 'g', 4); }

void addProviders(QComboBox* combo) {
  combo->addItem(QStringLiteral("vulkan"), QStringLiteral("vulkan"));
  combo->addItem(QStringLiteral("vulkan, cpu fallback"), QStringLiteral("vulkan,cpu"));
  combo->addItem(QStringLiteral("cpu"), QStringLiteral("cpu"));
}

}  // namespace

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      job_(new bridge::CompareJob(this)),
      modelEdit_(new QLineEdit),
      referenceEdit_(new QLineEdit),
      sideCombo_(new QComboBox),
      referenceCombo_(new QComboBox),
      shapesEdit_(new QLineEdit),
      everyNode_(new QCheckBox(tr("Compare every node (per-node errors, first divergence)"))),
      inputsEdit_(new QLineEdit),
      profileButton_(new QPushButton(tr("&Profile now"))),
      runButton_(new QPushButton(tr("&Run comparison"))),
      cancelButton_(new QPushButton(tr("Cancel"))),
      progress_(new QProgressBar),
      status_(makeStatusLabel(QStringLiteral("compareStatus"))),
      outputTable_(makeListTable(QStringLiteral("outputTable"),
                             {tr("Output"), tr("Result"), tr("Max abs error"), tr("Max rel error"), tr("Mean abs error"),
                              tr("Cosine"), tr("Beyond tolerance"), tr("Shape")})),
      divergenceButton_(new QPushButton),
      metricCombo_(new QComboBox),
      legend_(new OverlayLegend),
      topTable_(makeListTable(QStringLiteral("topTable"), {tr("Node"), tr("Op"), tr("Value")})) {
  setObjectName(QStringLiteral("comparePanel"));
  modelEdit_->setObjectName(QStringLiteral("modelEdit"));
  modelEdit_->setPlaceholderText(tr("The model to compare (the open model)"));
  referenceEdit_->setObjectName(QStringLiteral("referenceEdit"));
  referenceEdit_->setPlaceholderText(tr("Same model (or a ctx model / another model with the same outputs)"));
  shapesEdit_->setObjectName(QStringLiteral("shapesEdit"));
  shapesEdit_->setPlaceholderText(tr("x=1x3x224x224  (for inputs with free dimensions; several separated by spaces)"));
  sideCombo_->setObjectName(QStringLiteral("sideCombo"));
  referenceCombo_->setObjectName(QStringLiteral("referenceCombo"));
  addProviders(sideCombo_);
  addProviders(referenceCombo_);
  referenceCombo_->setCurrentIndex(2);  // vulkan against cpu: the usual question
  everyNode_->setChecked(true);

  auto browse = [this](QLineEdit* edit) {
    auto* button = new QPushButton(tr("Browse..."));
    connect(button, &QPushButton::clicked, this, [this, edit] {
      const QString path = QFileDialog::getOpenFileName(this, tr("Choose a model"), edit->text(), tr("ONNX models (*.onnx)"));
      if (!path.isEmpty()) edit->setText(path);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(button);
    return row;
  };
  auto* sideRow = new QHBoxLayout;
  sideRow->addWidget(sideCombo_);
  sideRow->addWidget(new QLabel(tr("against reference")));
  sideRow->addWidget(referenceCombo_);
  sideRow->addStretch(1);
  auto* form = new QFormLayout;
  form->addRow(tr("Model:"), browse(modelEdit_));
  form->addRow(tr("Reference model:"), browse(referenceEdit_));
  form->addRow(tr("Execution providers:"), sideRow);
  form->addRow(tr("Input shapes:"), shapesEdit_);
  form->addRow(QString(), everyNode_);
  inputsEdit_->setObjectName(QStringLiteral("profileInputsEdit"));
  inputsEdit_->setPlaceholderText(tr("x=input.npy  (profiled run; the other inputs are random)"));
  form->addRow(tr("Profile inputs:"), inputsEdit_);

  auto* loadButton = new QPushButton(tr("Load results..."));
  loadButton->setToolTip(tr("Per-node data (kiln compare --node-data, kiln run --profile) or a kiln compare --json report"));
  connect(loadButton, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load comparison or per-node data"), {}, tr("JSON (*.json)"));
    if (!path.isEmpty()) loadFile(path);
  });
  runButton_->setObjectName(QStringLiteral("runButton"));
  cancelButton_->setObjectName(QStringLiteral("cancelButton"));
  cancelButton_->setEnabled(false);
  connect(runButton_, &QPushButton::clicked, this, [this] { run(); });
  profileButton_->setObjectName(QStringLiteral("profileButton"));
  profileButton_->setToolTip(tr("Run the model on the first side's execution providers, profile the second run "
                                "(CPU op times, Vulkan partitions as units) and colour the graph by each node's time"));
  connect(profileButton_, &QPushButton::clicked, this, [this] { profile(); });
  connect(cancelButton_, &QPushButton::clicked, this, &ComparePanel::cancel);
  progress_->setObjectName(QStringLiteral("compareProgress"));
  progress_->setTextVisible(true);
  progress_->setFormat(QString());
  progress_->setRange(0, 1);
  progress_->setValue(0);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(runButton_);
  buttons->addWidget(profileButton_);
  buttons->addWidget(cancelButton_);
  buttons->addWidget(progress_, 1);
  buttons->addWidget(loadButton);

  status_->setText(tr("Set up the two sides and run, or load a result file."));
  divergenceButton_->setObjectName(QStringLiteral("divergenceButton"));
  divergenceButton_->setVisible(false);
  connect(divergenceButton_, &QPushButton::clicked, this, &ComparePanel::showFirstDivergence);
  auto* statusRow = new QHBoxLayout;
  statusRow->addWidget(status_, 1);
  statusRow->addWidget(divergenceButton_);

  // Per-node overlay: metric, legend, top-N.
  topTable_->horizontalHeader()->setStretchLastSection(false);  // the value beside its node, not at the far edge
  topTable_->setSortingEnabled(true);  // by node, op or value (numerically); filled largest first
  metricCombo_->setObjectName(QStringLiteral("metricCombo"));
  connect(metricCombo_, &QComboBox::textActivated, this, &ComparePanel::setMetric);
  auto* overlayPane = new QWidget;
  auto* overlayLayout = new QVBoxLayout(overlayPane);
  overlayLayout->setContentsMargins(0, 0, 0, 0);
  auto* metricRow = new QHBoxLayout;
  metricRow->addWidget(new QLabel(tr("Colour graph nodes by:")));
  metricRow->addWidget(metricCombo_, 1);
  overlayLayout->addLayout(metricRow);
  overlayLayout->addWidget(legend_);
  overlayLayout->addWidget(new QLabel(tr("Top %1 nodes (double-click to show in the graph):").arg(kTopNodes)));
  overlayLayout->addWidget(topTable_, 1);
  connect(topTable_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (const QTableWidgetItem* item = topTable_->item(row, 0)) emit showNodeRequested(item->text());
  });
  connect(outputTable_, &QTableWidget::cellDoubleClicked, this, [this] { showFirstDivergence(); });

  // The per-output table full width above (its eight columns need it), the overlay's legend and top-N below.
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(outputTable_);
  splitter->addWidget(overlayPane);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addLayout(statusRow);
  layout->addWidget(splitter, 1);

  connect(job_, &bridge::CompareJob::progress, this, &ComparePanel::onProgress);
  connect(job_, &bridge::CompareJob::finished, this, &ComparePanel::onFinished);
  connect(job_, &bridge::CompareJob::failed, this, &ComparePanel::onFailed);
  legend_->setOverlay(&overlay_, false);
}

void ComparePanel::setModelPath(const QString& path) {
  if (job_->isRunning()) return;
  if (path == modelEdit_->text()) return;
  modelEdit_->setText(path);
  // Another model: the previous one's results and overlay name its nodes, not these.
  results_ = {};
  outputTable_->setRowCount(0);
  divergenceButton_->hide();
  metricCombo_->clear();
  setMetric({});
  setStatus(status_, tr("Set up the two sides and run, or load a result file."));
}

void ComparePanel::configure(const QString& sideProviders, const QString& referenceProviders,
                             const QString& referenceModel, const QString& shapes) {
  sideCombo_->setCurrentIndex(std::max(0, sideCombo_->findData(sideProviders)));
  referenceCombo_->setCurrentIndex(std::max(0, referenceCombo_->findData(referenceProviders)));
  referenceEdit_->setText(referenceModel);
  shapesEdit_->setText(shapes);
}

void ComparePanel::setCompareEveryNode(bool on) { everyNode_->setChecked(on); }

QString ComparePanel::statusText() const { return status_->text(); }

bool ComparePanel::run() {
  const QString model = modelEdit_->text().trimmed();
  if (model.isEmpty() || !QFileInfo(model).isFile()) {
    setStatus(status_, tr("Choose a model file to compare first."), StatusTone::Error);
    return false;
  }
  bridge::CompareRequest request;
  request.side = {sideCombo_->currentText(), model, sideCombo_->currentData().toString()};
  const QString referenceModel = referenceEdit_->text().trimmed();
  request.reference = {referenceModel.isEmpty() ? referenceCombo_->currentText()
                                                 : QFileInfo(referenceModel).fileName() + QStringLiteral(" on ") +
                                                       referenceCombo_->currentText(),
                       referenceModel.isEmpty() ? model : referenceModel, referenceCombo_->currentData().toString()};
  request.shapes = shapesEdit_->text().split(QRegularExpression(QStringLiteral("[\\s;]+")), Qt::SkipEmptyParts);
  request.perNode = everyNode_->isChecked();
  if (!job_->start(request)) return false;
  profiling_ = false;
  setRunning(true);
  setStatus(status_, tr("Comparing %1 against %2...").arg(request.side.label, request.reference.label));
  return true;
}

void ComparePanel::setProfileInputs(const QString& inputs) { inputsEdit_->setText(inputs); }

bool ComparePanel::profile() {
  const QString model = modelEdit_->text().trimmed();
  if (model.isEmpty() || !QFileInfo(model).isFile()) {
    setStatus(status_, tr("Choose a model file to profile first."), StatusTone::Error);
    return false;
  }
  bridge::ProfileRequest request;
  request.modelPath = model;
  request.providers = sideCombo_->currentData().toString();
  const QRegularExpression separators(QStringLiteral("[\\s;]+"));
  request.shapes = shapesEdit_->text().split(separators, Qt::SkipEmptyParts);
  request.inputs = inputsEdit_->text().split(separators, Qt::SkipEmptyParts);
  request.runs = profileRuns_;
  if (!job_->startProfile(request)) return false;
  profiling_ = true;
  setRunning(true);
  setStatus(status_, tr("Profiling %1 on %2...").arg(QFileInfo(model).fileName(), sideCombo_->currentText()));
  return true;
}

void ComparePanel::cancel() {
  if (!job_->isRunning()) return;
  job_->cancel();
  status_->setText(tr("Cancelling..."));
}

void ComparePanel::setRunning(bool running) {
  runButton_->setEnabled(!running);
  profileButton_->setEnabled(!running);
  cancelButton_->setEnabled(running);
  if (running) {
    progress_->setRange(0, 0);  // busy until the first counted step
    progress_->setFormat(QString());
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(QString());
  }
}

void ComparePanel::onProgress(const QString& stage, qint64 done, qint64 total) {
  const QString name = stage == QLatin1String("bisect") ? tr("comparing nodes")
                       : stage == QLatin1String("run") ? tr("running both sides")
                       : stage == QLatin1String("inputs")  ? tr("preparing inputs")
                       : stage == QLatin1String("session") ? tr("creating the session")
                       : stage == QLatin1String("profile") ? tr("profiled runs")
                                                           : stage;
  if (total > 0) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(done));
    progress_->setFormat(tr("%1: %2 / %3").arg(name).arg(done).arg(total));
  } else {
    progress_->setRange(0, 0);
  }
  status_->setText((profiling_ ? tr("Profiling: %1...") : tr("Comparing: %1...")).arg(name));
  emit progressed(stage, done, total);
}

void ComparePanel::onFinished(const bridge::CompareResults& results) {
  setRunning(false);
  results_ = results;
  showResults();
  emit finished();
}

void ComparePanel::onFailed(const QString& code, const QString& message) {
  setRunning(false);
  setStatusTone(status_, StatusTone::Error);
  if (profiling_) {
    status_->setText(code == QLatin1String("CANCELLED") ? tr("Cancelled: nothing was profiled.")
                                                         : tr("The profiled run failed: %1: %2").arg(code, message));
  } else {
    status_->setText(code == QLatin1String("CANCELLED") ? tr("Cancelled: nothing was compared.")
                                                         : tr("The comparison failed: %1: %2").arg(code, message));
  }
  emit failed(code == QLatin1String("CANCELLED") ? code : code + QStringLiteral(": ") + message);
}

bool ComparePanel::loadFile(const QString& path) {
  auto read = bridge::loadCompareFile(path);
  if (!read.isOk()) {
    setStatus(status_,
              tr("Could not load %1: %2")
                  .arg(QFileInfo(path).fileName(), QString::fromStdString(read.status().toString())),
              StatusTone::Error);
    emit failed(QString::fromStdString(read.status().toString()));
    return false;
  }
  results_ = std::move(read).value();
  showResults();
  emit loaded();
  return true;
}

void ComparePanel::showResults() {
  outputTable_->setRowCount(static_cast<int>(results_.outputs.size()));
  int row = 0;
  for (const auto& output : results_.outputs) {
    auto* result = cell(output.passed ? tr("pass") : output.problem.isEmpty() ? tr("FAIL") : output.problem);
    result->setForeground(output.passed ? kPass : kFail);
    const QList<QTableWidgetItem*> items = {
        cell(output.name),
        result,
        numberCell(output.maxAbsError, g(output.maxAbsError)),
        numberCell(output.maxRelError, g(output.maxRelError)),
        numberCell(output.meanAbsError, g(output.meanAbsError)),
        numberCell(output.cosineSimilarity, QString::number(output.cosineSimilarity, 'f', 6)),
        numberCell(output.fractionBeyond, tr("%1 (%2%)").arg(output.beyondTolerance).arg(100 * output.fractionBeyond, 0, 'f', 2)),
        cell(output.shape)};
    for (int column = 0; column < items.size(); ++column) outputTable_->setItem(row, column, items[column]);
    ++row;
  }
  outputTable_->resizeColumnsToContents();

  QString text;
  if (!results_.outputs.isEmpty()) {
    const auto failing = std::count_if(results_.outputs.begin(), results_.outputs.end(), [](const auto& o) { return !o.passed; });
    text = failing == 0 ? tr("All %1 output(s) match").arg(results_.outputs.size())
                        : tr("%1 of %2 output(s) differ beyond tolerance").arg(failing).arg(results_.outputs.size());
    if (!results_.sideLabel.isEmpty()) text += tr(" (%1 against %2)").arg(results_.sideLabel, results_.referenceLabel);
    text += QStringLiteral(". ");
  }
  if (!results_.nodes.nodes.isEmpty()) {
    text += tr("%1 node(s) with per-node %2 data.").arg(results_.nodes.nodes.size()).arg(results_.nodes.kind);
  }
  if (!results_.perNodeProblem.isEmpty()) text += tr("Per-node comparison did not run: %1").arg(results_.perNodeProblem);
  const bool outputsMatch =
      std::all_of(results_.outputs.begin(), results_.outputs.end(), [](const auto& o) { return o.passed; });
  if (outputsMatch && !results_.firstDivergence.isEmpty()) {
    text += tr(" Intermediate values first differ beyond tolerance at %1.").arg(results_.firstDivergence);
  }
  // Red: an output differs; amber: outputs match but an intermediate value diverges; plain: everything agrees.
  setStatus(status_, text.isEmpty() ? tr("The file holds no outputs and no nodes.") : text,
            !outputsMatch ? StatusTone::Error : results_.passed() ? StatusTone::Normal : StatusTone::Warning);
  divergenceButton_->setVisible(!results_.firstDivergence.isEmpty());
  divergenceButton_->setText(tr("Show first divergence: %1").arg(results_.firstDivergence));

  metricCombo_->clear();
  const QStringList metrics = results_.nodes.metricNames();
  metricCombo_->addItems(metrics);
  // Time for a profile; the largest absolute error for a comparison.
  for (const QString& preferred : {QStringLiteral("time_ms"), QStringLiteral("max_abs_error")}) {
    if (metrics.contains(preferred)) {
      metricCombo_->setCurrentText(preferred);
      break;
    }
  }
  setMetric(metricCombo_->currentText());
}

void ComparePanel::setMetric(const QString& metric) {
  if (metricCombo_->currentText() != metric) metricCombo_->setCurrentText(metric);
  if (metric.isEmpty()) {
    overlay_.clear();
  } else {
    overlay_.setData(results_.nodes, metric);
  }
  legend_->setOverlay(&overlay_, !results_.firstDivergence.isEmpty());
  showTopNodes();
  emit overlayChanged();
}

void ComparePanel::showTopNodes() {
  const auto top = overlay_.topNodes(kTopNodes);
  QHash<QString, QString> ops;
  for (const auto& row : results_.nodes.nodes) ops.insert(row.node, row.opType);
  topTable_->setSortingEnabled(false);  // rows stay where they are put while filling
  topTable_->horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);  // largest first, as filled
  topTable_->setRowCount(static_cast<int>(top.size()));
  for (int row = 0; row < top.size(); ++row) {
    auto* name = cell(top[row].first);
    const QColor fill = *overlay_.colorFor(top[row].first);
    name->setBackground(fill);
    name->setForeground(fill.lightness() < 140 ? Qt::white : Qt::black);  // readable on dark red and pale yellow
    topTable_->setItem(row, 0, name);
    topTable_->setItem(row, 1, cell(ops.value(top[row].first)));
    topTable_->setItem(row, 2, numberCell(top[row].second, formatMetric(overlay_.metric(), top[row].second)));
  }
  topTable_->setSortingEnabled(true);
  topTable_->resizeColumnsToContents();
}

void ComparePanel::showFirstDivergence() {
  if (!results_.firstDivergence.isEmpty()) emit showNodeRequested(results_.firstDivergence);
}

}  // namespace kiln::studio
