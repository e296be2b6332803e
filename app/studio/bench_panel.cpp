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

// Okabe-Ito (Okabe & Ito, "Color Universal Design"): a qualitative palette that colour-blind readers tell apart
// too. The current run is drawn in these colours, a compared run in pale ones of the same hue (paleColor).
const QColor kBlue(0x00, 0x72, 0xb2);
const QColor kOrange(0xe6, 0x9f, 0x00);
const QColor kCreation = kBlue;
const QColor kFirstInference = kBlue;
const QColor kFirstResult = kOrange;
// Stage colours, one per stage: Okabe-Ito's seven hues, then five of Paul Tol's "muted" that differ from them, and
// grey; more stages than colours wrap around.
const QColor kStageColors[] = {kBlue,
                               kOrange,
                               QColor(0x00, 0x9e, 0x73),   // bluish green
                               QColor(0xd5, 0x5e, 0x00),   // vermillion
                               QColor(0x56, 0xb4, 0xe9),   // sky blue
                               QColor(0xf0, 0xe4, 0x42),   // yellow
                               QColor(0xcc, 0x79, 0xa7),   // reddish purple
                               QColor(0x88, 0x22, 0x55),   // wine
                               QColor(0x99, 0x99, 0x33),   // olive
                               QColor(0x33, 0x22, 0x88),   // indigo
                               QColor(0x44, 0xaa, 0x99),   // teal
                               QColor(0xcc, 0x66, 0x77),   // rose
                               QColor(0x99, 0x99, 0x99)};  // grey
// How far a compared run's colour moves toward the chart's background: pale on a light chart, faded on a dark one.
constexpr double kPaleness = 0.62;

// "epctx-file<br>warm": axis labels are rich text, and two short lines fit under a bar where "epctx-file / warm"
// would be cut short.
QString categoryLabel(const QString& mode, const QString& driverCache) {
  // "driver warm": the second word is the driver's shader cache, not Kiln's (that is the mode).
  return mode + QStringLiteral("<br>") +
         (driverCache == QLatin1String("n/a") ? driverCache : QStringLiteral("driver ") + driverCache);
}

// `color` moved kPaleness of the way toward `background`, opaque (legend markers show it as drawn).
QColor paleColor(const QColor& color, const QColor& background) {
  auto mix = [](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * kPaleness)); };
  return QColor(mix(color.red(), background.red()), mix(color.green(), background.green()),
                mix(color.blue(), background.blue()));
}

// The chart in the panel's palette (light or dark theme): background, title, legend, axis labels and grid.
void styleChart(QChart* chart, const QPalette& palette) {
  const QColor text = palette.color(QPalette::WindowText);
  QColor grid = text;
  grid.setAlpha(50);
  chart->setBackgroundBrush(palette.color(QPalette::Base));
  chart->setBackgroundPen(QPen(palette.color(QPalette::Mid)));
  chart->setTitleBrush(text);
  chart->legend()->setLabelColor(text);
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsColor(text);
    axis->setTitleBrush(text);
    axis->setLinePenColor(text);
    axis->setGridLineColor(grid);
  }
}

// "min 12.3 ms, p25 ..., max 20.1 ms over 5 runs": every number of a row's statistic, for tooltips.
QString statText(const bridge::BenchStat& s, int runs) {
  QStringList parts{QObject::tr("min %1").arg(bridge::formatMs(s.min))};
  if (s.p25) parts << QObject::tr("p25 %1").arg(bridge::formatMs(*s.p25));
  parts << QObject::tr("median %1").arg(bridge::formatMs(s.median));
  if (s.p75) parts << QObject::tr("p75 %1").arg(bridge::formatMs(*s.p75));
  parts << QObject::tr("p90 %1").arg(bridge::formatMs(s.p90));
  if (s.max) parts << QObject::tr("max %1").arg(bridge::formatMs(*s.max));
  return parts.join(QStringLiteral(", ")) + QObject::tr(" over %n run(s)", nullptr, runs);
}

// Rows of both reports by (mode, driver cache): the current report's order, then rows only the earlier one has.
QList<QPair<QString, QString>> rowKeys(const BenchReport* current, const BenchReport* comparison) {
  QList<QPair<QString, QString>> keys;
  for (const BenchReport* report : {current, comparison}) {
    if (!report) continue;
    for (const BenchRow& row : report->rows) {
      const QPair<QString, QString> key{row.mode, row.driverCache};
      if (!keys.contains(key)) keys.append(key);
    }
  }
  return keys;
}

QBarCategoryAxis* categoryAxis(const QList<QPair<QString, QString>>& keys) {
  auto* axis = new QBarCategoryAxis;
  for (const auto& key : keys) axis->append(categoryLabel(key.first, key.second));
  return axis;
}

QChart* resetChart(QChartView* view, const QString& title) {
  QChart* chart = view->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  chart->setTitle(title);
  return chart;
}

QValueAxis* valueAxis(const QString& title, double maximum) {
  auto* axis = new QValueAxis;
  axis->setTitleText(title);
  axis->setRange(0, maximum > 0 ? maximum * 1.12 : 1.0);
  axis->setLabelFormat(QStringLiteral("%.0f"));
  if (maximum > 0 && maximum < 10) axis->setLabelFormat(QStringLiteral("%.1f"));
  axis->applyNiceNumbers();
  return axis;
}

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
  const int categories = current_ ? static_cast<int>(rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr).size()) : 0;
  // Two charts side by side while each has room for every category's label whole; else one chart per line.
  return categories > kOverviewRows || (categories > 0 && 2 * (120 + categoryWidth() * categories) + 60 > width());
}

int BenchPanel::categoryWidth() const { return fontMetrics().horizontalAdvance(QStringLiteral("pipeline-cache")) + 24; }

void BenchPanel::arrangeForWidth(bool force) {
  const bool crowded = chartsCrowded();
  if (!force && crowded == crowded_) return;
  crowded_ = crowded;
  const int categories = current_ ? static_cast<int>(rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr).size()) : 0;
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

void BenchPanel::refreshCreationChart() {
  QChart* chart = resetChart(creationView_, tr("Session creation (ms)"));
  if (!current_) return;
  const auto keys = rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  const QColor background = palette().color(QPalette::Base);
  const QColor text = palette().color(QPalette::WindowText);
  double maximum = 0;
  bool withoutQuartiles = false;
  auto addSeries = [&](const BenchReport& report, const QString& objectName, bool earlier) {
    auto* series = new QBoxPlotSeries;
    series->setObjectName(objectName);
    series->setName(earlier ? tr("%1 (earlier)").arg(report.caption()) : report.caption());
    // The current run: solid, outlined in the text colour (whiskers and median readable in both themes). A compared
    // run: pale, outlined in its hue, so it reads as the same quantity, earlier.
    series->setBrush(earlier ? paleColor(kCreation, background) : kCreation);
    series->setPen(QPen(earlier ? kCreation : text, 1.2));
    series->setBoxWidth(0.6);
    for (const auto& key : keys) {
      const BenchRow* row = report.findRow(key.first, key.second);
      // Box plots are positional: a row this report lacks is an invisible box, so the others keep their place.
      auto* set = new QBoxSet(key.first + QStringLiteral(" / ") + key.second);
      if (row) {
        const bridge::BenchStat& s = row->sessionCreate;
        set->setValue(QBoxSet::LowerExtreme, s.min);
        set->setValue(QBoxSet::Median, s.median);
        if (s.hasBoxPlot()) {
          // The standard box plot: box from p25 to p75, whiskers to min and max.
          set->setValue(QBoxSet::LowerQuartile, *s.p25);
          set->setValue(QBoxSet::UpperQuartile, *s.p75);
          set->setValue(QBoxSet::UpperExtreme, *s.max);
          maximum = std::max(maximum, *s.max);
        } else {
          // A report written before kiln bench gave quartiles: the median line with whiskers to min and p90.
          set->setValue(QBoxSet::LowerQuartile, s.median);
          set->setValue(QBoxSet::UpperQuartile, s.median);
          set->setValue(QBoxSet::UpperExtreme, s.p90);
          maximum = std::max(maximum, s.p90);
          withoutQuartiles = true;
        }
        set->setProperty("toolTip", QStringLiteral("<b>%1</b>, driver cache %2%3<br>%4")
                                        .arg(key.first, key.second, earlier ? tr(" (earlier run)") : QString(),
                                             statText(s, row->runs).toHtmlEscaped()) +
                                        (s.hasBoxPlot() ? QString() : tr("<br>No quartiles in this report: "
                                                                         "whiskers from min to p90.")));
      } else {
        set->setPen(Qt::NoPen);
        set->setBrush(Qt::NoBrush);
      }
      series->append(set);
    }
    connect(series, &QBoxPlotSeries::hovered, creationView_, [](bool inside, QBoxSet* set) {
      if (inside) QToolTip::showText(QCursor::pos(), set->property("toolTip").toString());
      else QToolTip::hideText();
    });
    chart->addSeries(series);
  };
  addSeries(*current_, QStringLiteral("current"), false);
  if (comparison_) addSeries(*comparison_, QStringLiteral("comparison"), true);
  chart->setTitle(tr("Session creation (ms)<br><small>box: p25 to p75, line: median, whiskers: min and max%1</small>")
                      .arg(withoutQuartiles ? tr(" (p90 for older reports)") : QString()));
  QBarCategoryAxis* axisX = categoryAxis(keys);
  chart->addAxis(axisX, Qt::AlignBottom);
  QValueAxis* axisY = valueAxis(tr("ms"), maximum);
  chart->addAxis(axisY, Qt::AlignLeft);
  for (QAbstractSeries* series : chart->series()) {
    series->attachAxis(axisX);
    series->attachAxis(axisY);
  }
  chart->legend()->setVisible(comparison_.has_value());
  styleChart(chart, palette());
}

void BenchPanel::refreshLatencyChart() {
  QChart* chart = resetChart(latencyView_, tr("First inference and time to first result (median ms)"));
  latencyMaximum_ = 0;
  if (!current_) return;
  const auto keys = rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  const QColor background = palette().color(QPalette::Base);
  auto* series = new QBarSeries;
  series->setObjectName(QStringLiteral("latency"));
  series->setBarWidth(0.85);  // wide bars: each value label needs a bar at least a line of text wide
  auto addSets = [&](const BenchReport& report, bool earlier) {
    auto* first = new QBarSet(earlier ? tr("first inference (earlier)") : tr("first inference"));
    auto* result = new QBarSet(earlier ? tr("time to first result (earlier)") : tr("time to first result"));
    first->setObjectName(earlier ? QStringLiteral("firstInferenceEarlier") : QStringLiteral("firstInference"));
    result->setObjectName(earlier ? QStringLiteral("timeToFirstResultEarlier") : QStringLiteral("timeToFirstResult"));
    for (auto [set, color] : {std::pair{first, kFirstInference}, std::pair{result, kFirstResult}}) {
      set->setColor(earlier ? paleColor(color, background) : color);
      set->setBorderColor(earlier ? color : color.darker(125));
      // Values are written over the current run's bars only: the earlier ones are in the tooltips and the table.
      set->setLabelColor(earlier ? QColor(Qt::transparent) : palette().color(QPalette::WindowText));
    }
    for (const auto& key : keys) {
      const BenchRow* row = report.findRow(key.first, key.second);
      first->append(row ? row->firstInference.median : 0);
      result->append(row ? row->timeToFirstResult.median : 0);
      if (row) latencyMaximum_ = std::max(latencyMaximum_, row->timeToFirstResult.median);
    }
    series->append(first);
    series->append(result);
  };
  addSets(*current_, false);
  if (comparison_) addSets(*comparison_, true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  // Four significant digits, and every digit of the integer part ("12345", never "1.234e+04").
  const int integerDigits = latencyMaximum_ >= 1 ? static_cast<int>(std::floor(std::log10(latencyMaximum_))) + 1 : 1;
  series->setLabelsPrecision(std::max(4, integerDigits));
  // Upright labels are wider than a bar and ran into each other ("0.7917.15"); turned, each stays over its bar.
  series->setLabelsAngle(-90);
  connect(series, &QBarSeries::hovered, latencyView_, [keys](bool inside, int index, QBarSet* set) {
    if (!inside || index < 0 || index >= keys.size()) return QToolTip::hideText();
    QToolTip::showText(QCursor::pos(), tr("%1, driver cache %2: %3 %4")
                                           .arg(keys[index].first, keys[index].second, set->label(),
                                                bridge::formatMs(set->at(index))));
  });
  chart->addSeries(series);
  QBarCategoryAxis* axisX = categoryAxis(keys);
  chart->addAxis(axisX, Qt::AlignBottom);
  QValueAxis* axisY = valueAxis(tr("ms"), latencyMaximum_);
  chart->addAxis(axisY, Qt::AlignLeft);
  series->attachAxis(axisX);
  series->attachAxis(axisY);
  styleChart(chart, palette());
  fitLatencyLabels();
}

void BenchPanel::fitLatencyLabels() {
  QChart* chart = latencyView_->chart();
  QBarSeries* series = nullptr;
  for (QAbstractSeries* s : chart->series()) series = series ? series : qobject_cast<QBarSeries*>(s);
  const QList<QAbstractAxis*> vertical = chart->axes(Qt::Vertical);
  if (!series || vertical.isEmpty() || series->count() == 0) return;
  auto* axisY = static_cast<QValueAxis*>(vertical.first());
  // A turned label is one line of text wide: shown only while every bar is at least that wide, so no two labels
  // (close values on neighbouring bars included) can touch. Otherwise the values are in the tooltips.
  const QFontMetricsF metrics(series->barSets().first()->labelFont());
  const QRectF plot = chart->plotArea();
  const int categories = static_cast<int>(series->barSets().first()->count());
  const double barPixels = categories > 0 ? plot.width() / categories * series->barWidth() / series->count() : 0;
  const bool fits = barPixels >= metrics.height() + 2 && plot.height() > 0;
  if (series->isLabelsVisible() != fits) series->setLabelsVisible(fits);
  // Room above the tallest bar for its label, so the label stays inside the plot, clear of the title.
  double top = latencyMaximum_ > 0 ? latencyMaximum_ * 1.12 : 1.0;
  if (fits && latencyMaximum_ > 0) {
    const double labelPixels = metrics.horizontalAdvance(QString::number(latencyMaximum_, 'g', series->labelsPrecision())) + 8;
    const double share = std::min(0.6, labelPixels / plot.height());
    top = std::max(top, latencyMaximum_ / (1 - share));
  }
  if (std::abs(axisY->max() - top) / top > 0.02 && axisY->max() < top) {
    axisY->setRange(0, top);
    axisY->applyNiceNumbers();
  }
}

void BenchPanel::refreshStageChart() {
  QChart* chart = resetChart(stageView_, tr("Session creation stages (median ms)"));
  if (!current_) return;
  // Bars, bottom to top: each row of the current report, with its earlier counterpart right after it.
  struct Bar {
    const BenchRow* row;
    QString label;
    bool earlier;
  };
  QList<Bar> bars;
  const auto keys = rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  for (const auto& key : keys) {
    if (const BenchRow* row = current_->findRow(key.first, key.second)) bars.append({row, row->label(), false});
    if (comparison_) {
      if (const BenchRow* row = comparison_->findRow(key.first, key.second)) {
        bars.append({row, row->label() + tr(" (earlier)"), true});
      }
    }
  }
  QStringList stageKeys;
  for (const Bar& bar : bars) {
    for (const auto& stage : bar.row->stages) {
      if (!stageKeys.contains(stage.first)) stageKeys.append(stage.first);
    }
  }
  auto* series = new QHorizontalStackedBarSeries;
  series->setObjectName(QStringLiteral("stages"));
  series->setBarWidth(0.7);
  const QColor background = palette().color(QPalette::Base);
  double maximum = 0;
  // One set per stage for the current run's bars; with a comparison, a pale twin per stage for the earlier bars
  // (a set has one colour), left out of the legend.
  for (bool earlier : {false, true}) {
    if (earlier && !comparison_) break;
    for (qsizetype s = 0; s < stageKeys.size(); ++s) {
      const QColor color = kStageColors[static_cast<size_t>(s) % std::size(kStageColors)];
      auto* set = new QBarSet(bridge::stageDisplayName(stageKeys[s]));
      set->setObjectName(earlier ? QStringLiteral("earlier:") + stageKeys[s] : stageKeys[s]);
      set->setColor(earlier ? paleColor(color, background) : color);
      set->setBorderColor(earlier ? color : background);
      for (const Bar& bar : bars) {
        double value = 0;
        for (const auto& stage : bar.row->stages) {
          if (stage.first == stageKeys[s] && bar.earlier == earlier) value = stage.second;
        }
        set->append(value);
      }
      series->append(set);
    }
  }
  for (const Bar& bar : bars) {
    double total = 0;
    for (const auto& stage : bar.row->stages) total += stage.second;
    maximum = std::max(maximum, total);
  }
  connect(series, &QHorizontalStackedBarSeries::hovered, stageView_, [bars](bool inside, int index, QBarSet* set) {
    if (!inside || index < 0 || index >= bars.size()) return QToolTip::hideText();
    QToolTip::showText(QCursor::pos(),
                       QStringLiteral("%1: %2 %3").arg(bars[index].label, set->label(), bridge::formatMs(set->at(index))));
  });
  chart->addSeries(series);
  for (QLegendMarker* marker : chart->legend()->markers(series)) {
    auto* barMarker = qobject_cast<QBarLegendMarker*>(marker);
    if (barMarker && barMarker->barset()->objectName().startsWith(QLatin1String("earlier:"))) marker->setVisible(false);
  }
  auto* axisY = new QBarCategoryAxis;
  for (const Bar& bar : bars) axisY->append(bar.label);
  chart->addAxis(axisY, Qt::AlignLeft);
  QValueAxis* axisX = valueAxis(tr("ms"), maximum);
  chart->addAxis(axisX, Qt::AlignBottom);
  series->attachAxis(axisY);
  series->attachAxis(axisX);
  styleChart(chart, palette());
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
  const auto keys = rowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
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
