// ScreenshotTour: drives a MainWindow through every panel on a real model and saves one PNG per panel, for the
// documentation and for checking the layout on a virtual display (tests/tools/studio_screenshots.sh runs it under
// Xvfb). Each step waits for the panel's own completion signal, with a timeout, so a screenshot shows finished
// work, never a spinner. Hidden option: kiln-studio --screenshot-tour DIR model.onnx.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace kiln::studio {

class MainWindow;

class ScreenshotTour : public QObject {
  Q_OBJECT

 public:
  ScreenshotTour(MainWindow& window, QString outputDir, QString modelPath);

  // Starts the tour; `finished(ok)` follows once every step ran (or one failed).
  void start();
  const QStringList& savedFiles() const { return saved_; }
  const QStringList& errors() const { return errors_; }

 signals:
  void finished(bool ok);

 private:
  // One step: `begin` starts work and calls `done()` when the panel has finished (or a timeout fires).
  struct Step {
    QString name;
    std::function<void(std::function<void()> done)> begin;
    int timeoutMs;
  };
  void runStep(size_t index);
  void grab(const QString& name, QWidget* widget = nullptr);

  MainWindow& window_;
  QString outputDir_, modelPath_, ctxPath_;
  std::vector<Step> steps_;
  QStringList saved_, errors_;
};

}  // namespace kiln::studio
