// ScreenshotTour: drives a MainWindow through every panel on a real model and saves one PNG per panel, for the
// documentation and for checking the layout on a virtual display (tests/tools/studio_screenshots.sh runs it under
// Xvfb). Each step waits for the panel's own completion signal, with a timeout, so a screenshot shows finished
// work, never a spinner. Hidden option: kiln-studio --screenshot-tour DIR model.onnx.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace kiln::bridge {
class GraphDocument;
}

namespace kiln::studio {

class ComparePanel;
class CompilePanel;
class GraphPanel;
class MainWindow;
class MergeWizard;
class ModelDiffView;

class ScreenshotTour : public QObject {
  Q_OBJECT

 public:
  // `benchShapes` ("x=1x3x640x640") is what the benchmark needs for a model with symbolic dimensions.
  ScreenshotTour(MainWindow& window, QString outputDir, QString modelPath, QString benchShapes = {});

  // Adds the control-flow and large-graph steps: `ifModel` (tests/tools/make_if_model.py) with a body open, then
  // compiled with its nested EPContext nodes in a body; `bigModel` (make_big_graph.py) collapsed, expanded and
  // zoomed onto a node. Either may be "" to leave its steps out.
  void addControlFlowAndLargeGraphSteps(const QString& ifModel, const QString& bigModel);
  // Adds "18-fit-legible-ppocr" (PP-OCRv4 det at Fit: legible labels; left out, with a note in the output folder,
  // when the model is not in the model cache) and "19-edge-shapes" (input shapes given, tensor shapes on edges).
  void addFitAndEdgeShapeSteps();
  // Adds steps 20-22: `functionModel` (tests/tools/make_function_model.py) with its function body open and an
  // attribute reference selected; then on the bundled sample model a compare run with the node of largest error
  // selected (its statistics and histogram of differences in the details), and a "Profile now" run colouring the
  // graph by CPU op time. `functionModel` "" leaves step 20 out.
  void addFunctionAndOverlaySteps(const QString& functionModel);
  // Adds "23-model-diff": `modelA` and `modelB` (tests/tools/make_diff_models.py) side by side in the model diff
  // window with the first change selected. Either "" leaves it out.
  void addModelDiffStep(const QString& modelA, const QString& modelB);
  // Runs only the steps whose name starts with one of `prefixes` ("11", "12-if"); all when empty.
  void setStepFilter(const QStringList& prefixes) { filter_ = prefixes; }
  // Starts the tour; `finished(ok)` follows once every step ran (or one failed).
  void start();
  const QStringList& savedFiles() const { return saved_; }
  const QStringList& errors() const { return errors_; }

 signals:
  void finished(bool ok);

 private:
  using Done = std::function<void()>;
  // One step: `begin` starts work and calls `done()` when the panel has finished (or the timeout fires first);
  // then the window is grabbed as <name>.png. Signal handlers use stepContext_, deleted when the next step starts.
  struct Step {
    QString name;
    std::function<void(Done done)> begin;
    int timeoutMs;
  };
  void runStep(size_t index);
  // The body with the most op nodes (or EPContext nodes), "" when the model has none.
  static QString largestBody(const bridge::GraphDocument& root, bool byEpContext);
  // True when `panel` shows a model with bodies; otherwise records that `step` needs step `needs` first, calls
  // `done` and returns false.
  bool hasBodies(GraphPanel* panel, const QString& step, const QString& needs, const Done& done);
  void grab(const QString& name);
  // What the steps share. A handler for a panel's failed(message): records "<prefix><message>" and ends the step.
  std::function<void(const QString&)> recordFailure(const QString& prefix, const Done& done);
  // Ends the step when `panel` has finished the (re)layout that `start` begins; a failure is a "graph: " error.
  void waitForLayout(GraphPanel* panel, const Done& done, const std::function<void()>& start);
  // Starts `compare`'s comparison (its profiled run with `profile`); a failure, or a run that does not start, is a
  // "compare: " ("profile: ") error and ends the step. The caller connects what follows success first.
  void startCompare(ComparePanel* compare, bool profile, const Done& done);
  // Starts `compile`'s compile; a failure is a "compile: CODE message" error and ends the step.
  void startCompile(CompilePanel* compile, const Done& done);

  MainWindow& window_;
  QString outputDir_, modelPath_, benchShapes_, ctxPath_;
  QObject* stepContext_ = nullptr;
  QPointer<MergeWizard> mergeWizard_;
  QPointer<ModelDiffView> diffView_;
  std::vector<Step> steps_;
  QStringList saved_, errors_, filter_;
};

}  // namespace kiln::studio
