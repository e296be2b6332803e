// CompilePanel: the Compile API (kiln::compileModel, `kiln compile`) as a form, with live per-stage progress, the
// engine's log, cancel, and a summary of what was written. Self-contained: the main window sets the source model and
// opens the ctx model that compiled() names.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QString>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "compile_job.h"
#include "compile_outputs.h"
#include "kiln/device.h"
#include "kiln/progress.h"

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QThread;
class QTreeWidget;
class QTreeWidgetItem;

namespace kiln::studio {

class CompilePanel : public QWidget {
  Q_OBJECT

 public:
  explicit CompilePanel(QWidget* parent = nullptr);
  // Cancels a running compile and waits for the engine to stop (no partial files are left).
  ~CompilePanel() override;

  // The model to compile (shown read-only). The output path follows it: <stem>_ctx.onnx beside it unless the user
  // typed another path for this same model earlier. Another model also clears the previous compile's result,
  // progress and error (a compile still running keeps its own and reports for its own model).
  void setSourceModel(const QString& path);
  QString sourceModel() const;
  // Same as clicking Compile: checks the form, then compiles on a worker thread. Form errors are shown at once and
  // reported through compileFailed("INVALID_ARGUMENT", ...).
  void startCompile();
  // Same as clicking Cancel: the compile ends with compileFailed("CANCELLED", ...) and writes nothing.
  void cancelCompile();
  bool isRunning() const;

  // The form's values as the compile job takes them (for tests and for "copy as command line" later).
  app::CompileSettings settings() const;
  // The text of the error line ("" when the last compile succeeded or none ran).
  QString lastError() const;
  // The source model the Result pane's compile was for ("" when it shows no compile).
  QString resultSourceModel() const { return resultSource_; }
  // Asked before a compile replaces existing files (the ctx model, its binary, its external initializers), with
  // their paths; true replaces them. The default shows a Replace/Cancel message box; tests answer it themselves.
  using ReplaceQuestion = std::function<bool(const QStringList& existingFiles)>;
  void setReplaceQuestion(ReplaceQuestion question) { replaceQuestion_ = std::move(question); }
  // True once the device list has been read (or failed to read).
  bool devicesListed() const { return devicesListed_; }

  // Widget object names, for tests and style sheets: sourcePathEdit, outputPathEdit, outputBrowseButton,
  // embedModeCheck, prefixEdit, extInitializersEdit, extThresholdSpin, errorIfNoNodesCheck, errorIfExistsCheck,
  // liveDeviceRadio, deviceCombo, profileRadio, profileEdit, profileBrowseButton, optimizationCombo, autotuneCheck,
  // shapesEdit, compileButton, statusLabel, overallProgress, stageTree, logLevelCombo, logView, resultView.

 signals:
  void compiled(const QString& ctxModelPath);
  void compileFailed(const QString& code, const QString& message);
  // One per engine progress event, in the engine's order (queued from the compiling thread).
  void progressed(const QString& stage, qint64 done, qint64 total);
  // The device list arrived (or failed: then the combo holds only the default entry and an explanation).
  void devicesReady();

 private:
  struct StageRow {
    QTreeWidgetItem* item = nullptr;
    qint64 startedMs = 0;
    qint64 endedMs = -1;  // -1 while the stage is the active one
    qint64 done = 0, total = 0;  // its latest event
    ProgressStep step = ProgressStep::OTHER;
  };

  QWidget* buildForm();
  QWidget* buildProgressArea();
  QWidget* buildResultArea();
  void listDevicesInBackground();
  void showDevices();
  void browseOutput();
  void browseProfile();
  void updateTargetMode();
  void setRunning(bool running);
  void showError(const QString& code, const QString& message);
  bool mayReplace(const app::CompileSettings& settings);
  void resetForSource(const QString& path);
  void onProgress(const QString& stage, qint64 done, qint64 total, int step);
  void onFinished(const bridge::CompileSummary& summary);
  void onFailed(const QString& code, const QString& message);
  void closeActiveStage();
  void refreshStageElapsed(StageRow& row);
  void onLogLine(int level, const QString& text);  // from LogHub
  void writeLog(int level, const QString& text);
  void writeMarker(const QString& text);  // "compile started/finished" lines of this panel
  void markEarlierStagesDone(ProgressStep step);

  bridge::CompileJob* job_;
  QLineEdit* sourceEdit_;
  QLineEdit* outputEdit_;
  QCheckBox* embedCheck_;
  QLineEdit* prefixEdit_;
  QLineEdit* extInitializersEdit_;
  QSpinBox* extThresholdSpin_;
  QCheckBox* errorIfNoNodesCheck_;
  QCheckBox* errorIfExistsCheck_;
  QRadioButton* liveDeviceRadio_;
  QComboBox* deviceCombo_;
  QRadioButton* profileRadio_;
  QLineEdit* profileEdit_;
  QPushButton* profileBrowse_;
  QComboBox* optimizationCombo_;
  QCheckBox* autotuneCheck_;
  QLineEdit* shapesEdit_;
  QPushButton* compileButton_;
  QLabel* statusLabel_;
  QProgressBar* overallBar_;
  QTreeWidget* stageTree_;
  QComboBox* logLevelCombo_;
  QPlainTextEdit* logView_;
  QLabel* resultView_;
  QList<QWidget*> formWidgets_;  // disabled while a compile runs

  // The output path per source model; what was typed for one model never carries over to another.
  bridge::OutputPathChoice outputChoice_;
  bridge::ModelFieldsMemory modelFields_;  // shapes, prefix, external initializers file: per model
  ReplaceQuestion replaceQuestion_;
  QString compilingSource_;  // the source of the running (or last started) compile
  QString resultSource_;     // the source the Result pane belongs to
  QStringList lastWritten_;  // files the last successful compile wrote (its source may replace them unasked)
  QString writtenFor_;       // that compile's source
  QString lastError_;

  // Device listing on a thread the panel owns (waited for in the destructor).
  QThread* deviceThread_ = nullptr;
  std::shared_ptr<Result<std::vector<VulkanDeviceDescription>>> devices_;
  bool devicesListed_ = false;

  QElapsedTimer clock_;  // since the compile started
  QHash<QString, StageRow> stages_;
  QString activeStage_;
  qint64 lastEventMs_ = 0;
  int overallPermille_ = 0;
  int partitionIndex_ = 0, partitionCount_ = 0;
};

}  // namespace kiln::studio
