#include "bench_panel.h"

#include <QBarCategoryAxis>
#include <QBarLegendMarker>
#include <QBarSeries>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "bench_charts.h"
#include "bench_runner.h"
#include "compile_job.h"
#include "shape_check.h"

namespace kiln::studio {

using bridge::BenchReport;
using bridge::BenchRow;

namespace {

const char* const kModes[] = {"cold", "pipeline-cache", "epctx-embed", "epctx-file", "in-process"};
const char* const kDriverCaches[] = {"cold", "warm"};
// Rows the two-by-two overview has room for; more rows get one full-width chart per line.
constexpr int kOverviewRows = 4;

QChartView* makeChartView(const QString& objectName) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);  // redrawn on every report; animations only delay reading
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  auto* view = new QChartView(chart);
  view->setObjectName(objectName);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(360, 260);
  return view;
}

}  // namespace

BenchPanel::BenchPanel(QWidget* parent) : QWidget(parent), runner_(new bridge::BenchRunner(this)) {
  buildUi();
  connect(runner_, &bridge::BenchRunner::progress, this, &BenchPanel::onProgress);
  connect(runner_, &bridge::BenchRunner::finished, this, &BenchPanel::onFinished);
  connect(runner_, &bridge::BenchRunner::failed, this, &BenchPanel::onFailed);
  connect(runner_, &bridge::BenchRunner::canceled, this, &BenchPanel::onCanceled);
  refresh();
}

BenchPanel::~BenchPanel() = default;  // the runner, a child, kills a running bench and removes its work folder

void BenchPanel::buildUi() {
  modelEdit_ = new QLineEdit;
  modelEdit_->setPlaceholderText(tr("ONNX model to benchmark"));
  auto* browse = new QPushButton(tr("Browse..."));
  connect(browse, &QPushButton::clicked, this, &BenchPanel::chooseModel);
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(modelEdit_, 1);
  modelRow->addWidget(browse);

  auto* modesRow = new QHBoxLayout;
  for (const char* mode : kModes) {
    auto* box = new QCheckBox(QString::fromLatin1(mode));
    box->setObjectName(QStringLiteral("mode-") + QString::fromLatin1(mode));
    box->setChecked(true);
    modeBoxes_.append(box);
    modesRow->addWidget(box);
  }
  modeBoxes_[0]->setToolTip(tr("No Kiln cache: optimize, select kernels, compile shaders, create pipelines"));
  modeBoxes_[1]->setToolTip(tr("kiln.vulkan.pipeline_cache_path: the driver's pipeline cache on disk"));
  modeBoxes_[2]->setToolTip(tr("A ctx model from kiln compile with the binary embedded"));
  modeBoxes_[3]->setToolTip(tr("A ctx model from kiln compile with the binary in a file beside it"));
  modeBoxes_[4]->setToolTip(tr("A second session in the same process (in-memory caches)"));
  modesRow->addStretch(1);

  auto* optionsRow = new QHBoxLayout;
  for (const char* state : kDriverCaches) {
    auto* box = new QCheckBox(QString::fromLatin1(state));
    box->setObjectName(QStringLiteral("driver-") + QString::fromLatin1(state));
    box->setChecked(true);
    driverCacheBoxes_.append(box);
    optionsRow->addWidget(box);
  }
  driverCacheBoxes_[0]->setToolTip(tr("An empty driver shader cache for every process"));
  driverCacheBoxes_[1]->setToolTip(tr("The driver's shader cache primed by the warm-up, as a deployed app has it"));
  optionsRow->addSpacing(16);
  optionsRow->addWidget(new QLabel(tr("Runs:")));
  runsSpin_ = new QSpinBox;
  runsSpin_->setRange(1, 1000);
  runsSpin_->setValue(5);
  runsSpin_->setToolTip(tr("Measured runs per row, each in a fresh process, after one discarded warm-up"));
  optionsRow->addWidget(runsSpin_);
  optionsRow->addSpacing(8);
  optionsRow->addWidget(new QLabel(tr("Inferences:")));
  inferencesSpin_ = new QSpinBox;
  inferencesSpin_->setRange(0, 1000);
  inferencesSpin_->setValue(5);
  inferencesSpin_->setToolTip(tr("Steady inferences per run after the first"));
  optionsRow->addWidget(inferencesSpin_);
  optionsRow->addStretch(1);
  runButton_ = new QPushButton(tr("Run"));
  runButton_->setObjectName(QStringLiteral("runButton"));
  connect(runButton_, &QPushButton::clicked, this, [this] { isRunning() ? cancelBenchmark() : startBenchmark(); });
  optionsRow->addWidget(runButton_);

  shapesEdit_ = new QLineEdit;
  shapesEdit_->setObjectName(QStringLiteral("shapesEdit"));
  shapesEdit_->setPlaceholderText(tr("input=1x3x640x640, ... (as kiln bench --shape; needed for dynamic dimensions)"));
  shapesEdit_->setToolTip(tr("Input shapes for models with symbolic dimensions, comma-separated NAME=DxDx..."));

  auto* form = new QFormLayout;
  form->addRow(tr("Model:"), modelRow);
  form->addRow(tr("Modes:"), modesRow);
  form->addRow(tr("Driver cache:"), optionsRow);
  form->addRow(tr("Shapes:"), shapesEdit_);

  progressBar_ = new QProgressBar;
  progressBar_->setRange(0, 1);
  progressBar_->setValue(0);
  progressBar_->setTextVisible(false);
  progressBar_->setMaximumHeight(progressBar_->fontMetrics().height());
  stageLabel_ = new QLabel;
  stageLabel_->setMinimumWidth(stageLabel_->fontMetrics().horizontalAdvance(QStringLiteral("compile (embed mode 0) 00/00")));
  auto* progressRow = new QHBoxLayout;
  progressRow->addWidget(progressBar_, 1);
  progressRow->addWidget(stageLabel_);
  form->addRow(tr("Progress:"), progressRow);

  auto* settings = new QGroupBox(tr("Benchmark (kiln bench, fresh processes)"));
  settings->setLayout(form);
  settingsWidgets_ = {modelEdit_, browse, runsSpin_, inferencesSpin_, shapesEdit_};
  for (QCheckBox* box : modeBoxes_) settingsWidgets_.append(box);
  for (QCheckBox* box : driverCacheBoxes_) settingsWidgets_.append(box);

  reportLabel_ = new QLabel;
  reportLabel_->setObjectName(QStringLiteral("reportLabel"));
  reportLabel_->setWordWrap(true);
  reportLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  saveJsonButton_ = new QPushButton(tr("Save JSON..."));
  saveCsvButton_ = new QPushButton(tr("Save CSV..."));
  loadButton_ = new QPushButton(tr("Load..."));
  loadButton_->setToolTip(tr("Load an earlier run saved as JSON to compare with"));
  clearComparisonButton_ = new QPushButton(tr("Clear comparison"));
  connect(saveJsonButton_, &QPushButton::clicked, this, &BenchPanel::chooseSaveJson);
  connect(saveCsvButton_, &QPushButton::clicked, this, &BenchPanel::chooseSaveCsv);
  connect(loadButton_, &QPushButton::clicked, this, &BenchPanel::chooseLoad);
  connect(clearComparisonButton_, &QPushButton::clicked, this, &BenchPanel::clearComparison);
  auto* reportRow = new QHBoxLayout;
  reportRow->addWidget(reportLabel_, 1);
  reportRow->addWidget(saveJsonButton_);
  reportRow->addWidget(saveCsvButton_);
  reportRow->addWidget(loadButton_);
  reportRow->addWidget(clearComparisonButton_);

  messageLabel_ = new QLabel;
  messageLabel_->setObjectName(QStringLiteral("messageLabel"));
  messageLabel_->setWordWrap(true);
  messageLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  messageLabel_->setVisible(false);

  creationView_ = makeChartView(QStringLiteral("creationChart"));
  latencyView_ = makeChartView(QStringLiteral("latencyChart"));
  stageView_ = makeChartView(QStringLiteral("stageChart"));
  stageView_->chart()->legend()->setAlignment(Qt::AlignRight);
  // Queued: fitting may change the value axis, and with it the plot area.
  connect(latencyView_->chart(), &QChart::plotAreaChanged, this, &BenchPanel::fitLatencyLabels, Qt::QueuedConnection);

  ratiosTable_ = new QTableWidget;
  ratiosTable_->setObjectName(QStringLiteral("ratiosTable"));
  ratiosTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  ratiosTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  ratiosTable_->setAlternatingRowColors(true);
  ratiosTable_->verticalHeader()->setVisible(false);
  ratiosTable_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  summaryLabel_ = new QLabel;
  summaryLabel_->setObjectName(QStringLiteral("summaryLabel"));
  summaryLabel_->setWordWrap(true);
  summaryLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* ratiosBox = new QWidget;
  auto* ratiosLayout = new QVBoxLayout(ratiosBox);
  ratiosLayout->setContentsMargins(0, 0, 0, 0);
  auto* ratiosTitle = new QLabel(tr("<b>Ratios</b> (x cold = median of cold / median of the row, same driver cache). Under each mode, "
         "cold / warm is the driver's shader cache: empty for every run, or primed by a warm-up run."));
  ratiosTitle->setWordWrap(true);
  ratiosLayout->addWidget(ratiosTitle);
  ratiosLayout->addWidget(ratiosTable_, 1);
  ratiosLayout->addWidget(summaryLabel_);

  ratiosBox_ = ratiosBox;
  chartsGrid_ = new QGridLayout;
  auto* charts = new QWidget;
  charts->setLayout(chartsGrid_);
  // Many rows need room for their labels: the charts then grow past the window and the area scrolls.
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("chartsArea"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(charts);
  arrangeCharts(false);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(settings);
  layout->addLayout(reportRow);
  layout->addWidget(messageLabel_);
  layout->addWidget(scroll, 1);
}

void BenchPanel::arrangeCharts(bool crowded) {
  // Up to four rows: the charts two by two, an overview. More: one chart per line at full width, each category
  // wide enough for its two-line label, and the stage chart tall enough for one bar per row.
  for (QWidget* widget : {static_cast<QWidget*>(creationView_), static_cast<QWidget*>(latencyView_),
                          static_cast<QWidget*>(stageView_), ratiosBox_}) {
    chartsGrid_->removeWidget(widget);
  }
  if (crowded) {
    chartsGrid_->addWidget(creationView_, 0, 0, 1, 2);
    chartsGrid_->addWidget(latencyView_, 1, 0, 1, 2);
    chartsGrid_->addWidget(stageView_, 2, 0, 1, 2);
    chartsGrid_->addWidget(ratiosBox_, 3, 0, 1, 2);
  } else {
    chartsGrid_->addWidget(creationView_, 0, 0);
    chartsGrid_->addWidget(latencyView_, 0, 1);
    chartsGrid_->addWidget(stageView_, 1, 0);
    chartsGrid_->addWidget(ratiosBox_, 1, 1);
  }
  for (int i = 0; i < 4; ++i) chartsGrid_->setRowStretch(i, i < (crowded ? 4 : 2) ? 1 : 0);
  chartsGrid_->setColumnStretch(0, 1);
  chartsGrid_->setColumnStretch(1, 1);
}

void BenchPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && creationView_) refresh();
}

void BenchPanel::setModel(const QString& path) { modelEdit_->setText(path); }

QString BenchPanel::model() const { return modelEdit_->text().trimmed(); }

void BenchPanel::setModes(const QStringList& modes) {
  for (QCheckBox* box : modeBoxes_) box->setChecked(modes.contains(box->text()));
}

void BenchPanel::setDriverCaches(const QStringList& states) {
  for (QCheckBox* box : driverCacheBoxes_) box->setChecked(states.contains(box->text()));
}

void BenchPanel::setRuns(int runs) { runsSpin_->setValue(runs); }

void BenchPanel::setInferences(int inferences) { inferencesSpin_->setValue(inferences); }

void BenchPanel::setShapes(const QString& shapes) { shapesEdit_->setText(shapes); }

bool BenchPanel::isRunning() const { return runner_->isRunning(); }

void BenchPanel::startBenchmark() {
  if (isRunning()) return;
  bridge::BenchOptions options;
  options.model = model();
  options.modes.clear();
  for (QCheckBox* box : modeBoxes_) {
    if (box->isChecked()) options.modes << box->text();
  }
  options.driverCaches.clear();
  for (QCheckBox* box : driverCacheBoxes_) {
    if (box->isChecked()) options.driverCaches << box->text();
  }
  options.runs = runsSpin_->value();
  options.inferences = inferencesSpin_->value();
  // The shapes field takes what the compile panel's does (one parser: kiln::app::parseNamedShapeList).
  auto shapes = bridge::parseShapeList(shapesEdit_->text());
  if (shapes.isOk()) {
    for (const QString& shape : *shapes) options.extraArguments << QStringLiteral("--shape") << shape;
  }
  QString problem;
  if (options.model.isEmpty()) {
    problem = tr("Choose a model to benchmark.");
  } else if (!shapes.isOk()) {
    problem = QString::fromStdString(shapes.status().message());
  } else if (Status named = bridge::checkShapeInputs(options.model, *shapes); !named.isOk()) {
    problem = QString::fromStdString(named.message());  // before any process starts
  } else if (options.modes.isEmpty()) {
    problem = tr("Choose at least one mode.");
  } else if (options.driverCaches.isEmpty()) {
    problem = tr("Choose at least one driver-cache state.");
  }
  if (!problem.isEmpty()) {
    showError(problem);
    emit benchmarkFailed(problem);
    return;
  }
  messageLabel_->setVisible(false);
  lastError_.clear();
  progressBar_->setRange(0, 0);  // busy until the first stage line
  stageLabel_->setText(tr("starting"));
  setRunning(true);
  if (!runner_->start(options)) {
    setRunning(false);  // failed() already reported why
    return;
  }
  stageLabel_->setToolTip(runner_->commandLine().join(QLatin1Char(' ')));
}

void BenchPanel::cancelBenchmark() {
  if (!isRunning()) return;
  stageLabel_->setText(tr("canceling"));
  runButton_->setEnabled(false);  // until the processes are gone
  runner_->cancel();
}

void BenchPanel::setRunning(bool running) {
  for (QWidget* widget : settingsWidgets_) widget->setEnabled(!running);
  runButton_->setEnabled(true);
  runButton_->setText(running ? tr("Cancel") : tr("Run"));
  if (!running) {
    progressBar_->setRange(0, 1);
    progressBar_->setValue(0);
  }
}

void BenchPanel::onProgress(const QString& stage, qint64 done, qint64 total) {
  if (total > 0) {
    progressBar_->setRange(0, static_cast<int>(total));
    progressBar_->setValue(static_cast<int>(done));
    stageLabel_->setText(QStringLiteral("%1 %2/%3").arg(stage).arg(done).arg(total));
  } else {
    progressBar_->setRange(0, 0);
    stageLabel_->setText(stage);
  }
}

void BenchPanel::onFinished(const BenchReport& report) {
  setRunning(false);
  stageLabel_->setText(tr("done"));
  current_ = report;
  refresh();
  emit benchmarkFinished();
}

void BenchPanel::onFailed(const QString& message) {
  setRunning(false);
  stageLabel_->setText(tr("failed"));
  showError(message);
  emit benchmarkFailed(message);
}

void BenchPanel::onCanceled() {
  setRunning(false);
  stageLabel_->setText(tr("canceled"));
}

void BenchPanel::showError(const QString& message) {
  lastError_ = message;
  messageLabel_->setStyleSheet(QStringLiteral("color: #b00020;"));
  messageLabel_->setText(message);
  messageLabel_->setVisible(true);
}

void BenchPanel::showInfo(const QString& message) {
  messageLabel_->setStyleSheet(QString());
  messageLabel_->setText(message);
  messageLabel_->setVisible(true);
}

void BenchPanel::chooseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Model to benchmark"), QFileInfo(model()).absolutePath(),
                                                    tr("ONNX models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) setModel(path);
}

void BenchPanel::chooseSaveJson() {
  if (!current_) return;
  const QString suggested = QFileInfo(current_->model).completeBaseName() + QStringLiteral("_bench.json");
  const QString path = QFileDialog::getSaveFileName(this, tr("Save benchmark as JSON"), suggested,
                                                    tr("JSON (*.json);;All files (*)"));
  if (!path.isEmpty() && saveJson(path)) showInfo(tr("Saved %1").arg(path));
}

void BenchPanel::chooseSaveCsv() {
  if (!current_) return;
  const QString suggested = QFileInfo(current_->model).completeBaseName() + QStringLiteral("_bench.csv");
  const QString path = QFileDialog::getSaveFileName(this, tr("Save benchmark as CSV"), suggested,
                                                    tr("CSV (*.csv);;All files (*)"));
  if (!path.isEmpty() && saveCsv(path)) showInfo(tr("Saved %1").arg(path));
}

void BenchPanel::chooseLoad() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load an earlier benchmark"), QString(),
                                                    tr("kiln bench JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) loadReport(path);
}

bool BenchPanel::saveJson(const QString& path) {
  QString error;
  if (!current_) error = tr("There is no benchmark to save.");
  else if (bridge::saveBenchReportJson(*current_, path, &error)) return true;
  showError(error);
  return false;
}

bool BenchPanel::saveCsv(const QString& path) {
  QString error;
  if (!current_) {
    error = tr("There is no benchmark to save.");
  } else if (bridge::saveBenchReportCsv(*current_, path, &error)) {
    return true;
  }
  showError(error);
  return false;
}

bool BenchPanel::loadReport(const QString& jsonPath) {
  QString error;
  std::optional<BenchReport> report = bridge::loadBenchReport(jsonPath, &error);
  if (!report) {
    showError(error);
    return false;
  }
  messageLabel_->setVisible(false);
  if (current_) {
    comparison_ = std::move(report);
  } else {
    current_ = std::move(report);
  }
  refresh();
  return true;
}

void BenchPanel::clearComparison() {
  comparison_.reset();
  refresh();
}

void BenchPanel::refresh() {
  saveJsonButton_->setEnabled(current_.has_value());
  saveCsvButton_->setEnabled(current_.has_value());
  clearComparisonButton_->setEnabled(comparison_.has_value());
  if (!current_) {
    reportLabel_->setText(tr("No benchmark yet: choose a model and press Run, or load a saved report."));
  } else {
    QString text = tr("<b>%1</b> on %2 &mdash; %3 runs per row, %4 &mdash; %5")
                       .arg(QFileInfo(current_->model).fileName().toHtmlEscaped(), current_->device.toHtmlEscaped())
                       .arg(current_->runs)
                       .arg(current_->inferences == 1 ? tr("1 steady inference")
                                                      : tr("%1 steady inferences").arg(current_->inferences))
                       .arg(current_->caption().toHtmlEscaped());
    if (comparison_) {
      text += tr("<br>Compared with <b>%1</b> (pale): %2, %3 runs per row")
                  .arg(comparison_->caption().toHtmlEscaped(),
                       QFileInfo(comparison_->model).fileName().toHtmlEscaped())
                  .arg(comparison_->runs);
      if (comparison_->device != current_->device) {
        text += tr(", on another device: %1").arg(comparison_->device.toHtmlEscaped());
      }
    }
    reportLabel_->setText(text);
  }
  arrangeForWidth(true);
  refreshCreationChart();
  refreshLatencyChart();
  refreshStageChart();
  refreshRatiosTable();
}

bool BenchPanel::chartsCrowded() const {
  const int categories = current_ ? static_cast<int>(benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr).size()) : 0;
  // Two charts side by side while each has room for every category's label whole; else one chart per line.
  return categories > kOverviewRows || (categories > 0 && 2 * (120 + categoryWidth() * categories) + 60 > width());
}

int BenchPanel::categoryWidth() const { return fontMetrics().horizontalAdvance(QStringLiteral("pipeline-cache")) + 24; }

void BenchPanel::arrangeForWidth(bool force) {
  const bool crowded = chartsCrowded();
  if (!force && crowded == crowded_) return;
  crowded_ = crowded;
  const int categories = current_ ? static_cast<int>(benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr).size()) : 0;
  arrangeCharts(crowded);
  const int chartWidth = crowded ? 120 + categoryWidth() * categories : 360;
  creationView_->setMinimumSize(chartWidth, crowded ? 320 : 260);
  latencyView_->setMinimumSize(chartWidth, crowded ? 320 : 260);
  const int bars = current_ ? static_cast<int>(current_->rows.size() + (comparison_ ? comparison_->rows.size() : 0)) : 0;
  ratiosTable_->setMinimumHeight(crowded ? (categories + 1) * ratiosTable_->verticalHeader()->defaultSectionSize() +
                                                 2 * ratiosTable_->frameWidth() + 4
                                           : 0);
  stageView_->setMinimumSize(360, std::max(260, 110 + bars * (fontMetrics().height() + 14)));
}

void BenchPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  arrangeForWidth(false);
}


void BenchPanel::refreshRatiosTable() {
  ratiosTable_->clear();
  // Short headers so the table fits half the panel; the tooltips say exactly what each column is.
  QList<QPair<QString, QString>> headers = {
      {tr("Mode"), tr("Kiln's cache mode")},
      {tr("Driver"), tr("The driver's shader cache: cold (empty per process) or warm (primed)")},
      {tr("Create"), tr("Median session creation")},
      {tr("x cold"), tr("Session creation: median of cold / median of this row, same driver cache")},
      {tr("x cold (1st result)"), tr("Time to first result: median of cold / median of this row, same driver cache")}};
  if (comparison_) {
    headers += {{tr("Prev create"), tr("Median session creation in the earlier run")},
                {tr("Prev x cold"), tr("The earlier run's session-creation speedup against its cold row")},
                {tr("Prev x 1st"), tr("The earlier run's time-to-first-result speedup against its cold row")},
                {tr("Prev / now"), tr("Median session creation, earlier run / this run: above 1x is faster now")}};
  }
  ratiosTable_->setColumnCount(static_cast<int>(headers.size()));
  for (int c = 0; c < static_cast<int>(headers.size()); ++c) {
    auto* header = new QTableWidgetItem(headers[c].first);
    header->setToolTip(headers[c].second);
    ratiosTable_->setHorizontalHeaderItem(c, header);
  }
  summaryLabel_->clear();
  if (!current_) {
    ratiosTable_->setRowCount(0);
    return;
  }
  const auto keys = benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  ratiosTable_->setRowCount(static_cast<int>(keys.size()));
  auto put = [this](int row, int column, const QString& text, bool number) {
    auto* item = new QTableWidgetItem(text);
    if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    ratiosTable_->setItem(row, column, item);
  };
  for (int r = 0; r < static_cast<int>(keys.size()); ++r) {
    const auto& key = keys[r];
    put(r, 0, key.first, false);
    put(r, 1, key.second, false);
    const BenchRow* now = current_->findRow(key.first, key.second);
    put(r, 2, now ? bridge::formatMs(now->sessionCreate.median) : QStringLiteral("-"), true);
    put(r, 3, now ? bridge::formatRatio(now->speedupVsCold) : QStringLiteral("-"), true);
    put(r, 4, now ? bridge::formatRatio(now->timeToFirstResultSpeedupVsCold) : QStringLiteral("-"), true);
    if (!comparison_) continue;
    const BenchRow* before = comparison_->findRow(key.first, key.second);
    put(r, 5, before ? bridge::formatMs(before->sessionCreate.median) : QStringLiteral("-"), true);
    put(r, 6, before ? bridge::formatRatio(before->speedupVsCold) : QStringLiteral("-"), true);
    put(r, 7, before ? bridge::formatRatio(before->timeToFirstResultSpeedupVsCold) : QStringLiteral("-"), true);
    std::optional<double> change;
    if (now && before && now->sessionCreate.median > 0) change = before->sessionCreate.median / now->sessionCreate.median;
    put(r, 8, bridge::formatRatio(change), true);
  }
  ratiosTable_->resizeColumnsToContents();

  QStringList summary;
  summary << tr("epctx vs cold session creation: %1 (driver cache cold), %2 (warm)")
                 .arg(bridge::formatRatio(current_->epctxSpeedupDriverCold),
                      bridge::formatRatio(current_->epctxSpeedupDriverWarm));
  summary << tr("time to first result, fully cached vs fully cold: %1")
                 .arg(bridge::formatRatio(current_->timeToFirstResultFullyCachedVsFullyCold));
  if (current_->onnxRuntimeVsEpctx) {
    summary << tr("onnxruntime-node session creation / epctx: %1").arg(bridge::formatRatio(current_->onnxRuntimeVsEpctx));
  }
  summaryLabel_->setText(summary.join(QLatin1Char('\n')));
}

}  // namespace kiln::studio
