// BenchPanel: runs `kiln bench` on a model in fresh processes and charts what caching buys: session creation per
// mode with its spread, first-inference latency and time to first result, the stage breakdown and the speedups;
// saves the report as JSON or CSV and loads an earlier one to compare with.
#pragma once

#include <QString>
#include <QWidget>

#include <optional>

#include "bench_report_io.h"

class QCheckBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

QT_BEGIN_NAMESPACE
class QChartView;
QT_END_NAMESPACE

namespace kiln::bridge {
class BenchRunner;
}

namespace kiln::studio {

class BenchPanel : public QWidget {
  Q_OBJECT

 public:
  explicit BenchPanel(QWidget* parent = nullptr);
  ~BenchPanel() override;

  void setModel(const QString& path);
  QString model() const;
  // Modes and driver-cache states to run (names as kiln bench takes them), the runs per row and the steady
  // inferences per run; the check boxes and spin boxes show them.
  void setModes(const QStringList& modes);
  void setDriverCaches(const QStringList& states);
  void setRuns(int runs);
  void setInferences(int inferences);
  // Input shapes for symbolic dimensions, "x=1x3x640x640, ..." (each becomes a `kiln bench --shape`).
  void setShapes(const QString& shapes);

  // Starts `kiln bench` with the chosen options; benchmarkFinished() or benchmarkFailed() follows.
  void startBenchmark();
  // Ends the bench and every process it started; neither signal follows.
  void cancelBenchmark();
  bool isRunning() const;

  // Shows an earlier run saved as JSON: beside the current report as a comparison, or as the current report when
  // there is none yet. False (and the reason in lastError()) when the file is no kiln bench report.
  bool loadReport(const QString& jsonPath);
  void clearComparison();
  // Save the current report: the CLI's JSON document, or the CLI's CSV columns. False with lastError() on failure.
  bool saveJson(const QString& path);
  bool saveCsv(const QString& path);

  const bridge::BenchReport* currentReport() const { return current_ ? &*current_ : nullptr; }
  const bridge::BenchReport* comparisonReport() const { return comparison_ ? &*comparison_ : nullptr; }
  QString lastError() const { return lastError_; }
  bridge::BenchRunner* runner() const { return runner_; }

 protected:
  // A theme change (View > Theme) redraws the charts in the new palette.
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 signals:
  void benchmarkFinished();
  void benchmarkFailed(const QString& message);

 private:
  void buildUi();
  void arrangeCharts(bool crowded);
  // Charts two by two while the panel is wide enough for every category label of two charts side by side (and
  // there are at most kOverviewRows rows), else one full-width chart per line; `force` re-applies the sizes.
  void arrangeForWidth(bool force);
  bool chartsCrowded() const;
  int categoryWidth() const;  // pixels a category needs for its label
  void chooseModel();
  void chooseSaveJson();
  void chooseSaveCsv();
  void chooseLoad();
  void onProgress(const QString& stage, qint64 done, qint64 total);
  void onFinished(const bridge::BenchReport& report);
  void onFailed(const QString& message);
  void onCanceled();
  void setRunning(bool running);
  void showError(const QString& message);
  void showInfo(const QString& message);
  void refresh();
  void refreshCreationChart();
  void refreshLatencyChart();
  // Shows the latency chart's value labels only while every bar is wide enough for one (so none can overlap) and
  // leaves room above the tallest bar for its label; runs again whenever the plot area changes.
  void fitLatencyLabels();
  void refreshStageChart();
  void refreshRatiosTable();

  bridge::BenchRunner* runner_;
  std::optional<bridge::BenchReport> current_;
  std::optional<bridge::BenchReport> comparison_;
  QString lastError_;
  double latencyMaximum_ = 0;  // the tallest latency bar, ms
  bool crowded_ = false;       // charts one per line (arrangeForWidth)

  QLineEdit* modelEdit_ = nullptr;
  QList<QCheckBox*> modeBoxes_;
  QList<QCheckBox*> driverCacheBoxes_;
  QSpinBox* runsSpin_ = nullptr;
  QSpinBox* inferencesSpin_ = nullptr;
  QLineEdit* shapesEdit_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QProgressBar* progressBar_ = nullptr;
  QLabel* stageLabel_ = nullptr;
  QLabel* reportLabel_ = nullptr;
  QLabel* messageLabel_ = nullptr;
  QPushButton* saveJsonButton_ = nullptr;
  QPushButton* saveCsvButton_ = nullptr;
  QPushButton* loadButton_ = nullptr;
  QPushButton* clearComparisonButton_ = nullptr;
  QChartView* creationView_ = nullptr;
  QChartView* latencyView_ = nullptr;
  QChartView* stageView_ = nullptr;
  QTableWidget* ratiosTable_ = nullptr;
  QWidget* ratiosBox_ = nullptr;
  QGridLayout* chartsGrid_ = nullptr;
  QLabel* summaryLabel_ = nullptr;
  QList<QWidget*> settingsWidgets_;  // disabled while a bench runs
};

}  // namespace kiln::studio
