// ComparePanel: one model under two configurations (kiln/compare.h through bridge::CompareJob): each side's model
// and execution providers, input shapes, a run on a worker with progress and cancel, the per-output table, and the
// first diverging node one click away. Per-node results (or a per-node data / `kiln compare --json` file) drive the
// graph overlay: nodes coloured by a metric, its legend and the top-N table.
#pragma once

#include <QWidget>

#include "compare_job.h"
#include "node_overlay.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace kiln::studio {

class ComparePanel : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePanel(QWidget* parent = nullptr);

  // The model both sides run (the reference may name another model, e.g. the ctx model). Another model than the
  // one set clears the results and the overlay (they name the previous model's nodes).
  void setModelPath(const QString& path);
  // Sets up the two sides: providers "cpu", "vulkan", "vulkan,cpu"; `referenceModel` "" for the same model.
  void configure(const QString& sideProviders, const QString& referenceProviders, const QString& referenceModel = {},
                 const QString& shapes = {});
  void setCompareEveryNode(bool on);
  // Starts the comparison; false (with the reason in the status line) when it cannot start.
  bool run();
  void cancel();
  // Profiles the model on the first side's execution providers (2 runs, the last one profiled; inputs from the
  // Inputs field or random) in the worker, with progress and cancel; emits finished() with per-node times that
  // colour the graph and fill the top-N table, or failed(). False (reason in the status line) when it cannot start.
  bool profile();
  // "NAME=FILE" entries (spaces between several) for the profiled run's inputs; "" for random inputs.
  void setProfileInputs(const QString& inputs);
  // Runs per profile (the last one profiled); 2 unless set.
  void setProfileRuns(int runs) { profileRuns_ = runs; }
  // Loads per-node data or a `kiln compare --json` report; emits loaded() or failed().
  bool loadFile(const QString& path);
  // Selects the overlay metric (one of the data's metric names).
  void setMetric(const QString& metric);
  // Asks for the first diverging node to be shown (showNodeRequested), as its button does.
  void showFirstDivergence();

  const bridge::CompareResults& results() const { return results_; }
  const NodeOverlay& overlay() const { return overlay_; }
  bool isRunning() const { return job_->isRunning(); }
  QString statusText() const;

 signals:
  void finished();
  void failed(const QString& message);
  void loaded();
  void showNodeRequested(const QString& node);
  // A step of the running comparison or profile ("inputs", "session", "profile", "run", "bisect").
  void progressed(const QString& stage, qint64 done, qint64 total);
  // The overlay (data or metric) changed: the graph recolours its nodes.
  void overlayChanged();

 private:
  void onFinished(const bridge::CompareResults& results);
  void onFailed(const QString& code, const QString& message);
  void onProgress(const QString& stage, qint64 done, qint64 total);
  void showResults();
  void showTopNodes();
  void setRunning(bool running);

  bridge::CompareJob* job_;
  QLineEdit* modelEdit_;
  QLineEdit* referenceEdit_;
  QComboBox* sideCombo_;
  QComboBox* referenceCombo_;
  QLineEdit* shapesEdit_;
  QCheckBox* everyNode_;
  QLineEdit* inputsEdit_;
  QPushButton* profileButton_;
  bool profiling_ = false;  // the job in flight is a profiled run
  int profileRuns_ = 2;
  QPushButton* runButton_;
  QPushButton* cancelButton_;
  QProgressBar* progress_;
  QLabel* status_;
  QTableWidget* outputTable_;
  QPushButton* divergenceButton_;
  QComboBox* metricCombo_;
  OverlayLegend* legend_;
  QTableWidget* topTable_;
  bridge::CompareResults results_;
  NodeOverlay overlay_;
};

}  // namespace kiln::studio
