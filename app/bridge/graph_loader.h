// GraphLoader: builds a GraphDocument on a worker thread: kiln::inspectModel, kiln::analyzePartitions and, when
// the model has EPContext nodes, kiln::inspectEpContextModel. Results come back on the owner's thread.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>

#include "graph_document.h"
#include "input_shapes_text.h"
#include "kiln/progress.h"
#include "kiln/session_options.h"

namespace kiln::bridge {

class GraphLoader : public QObject {
  Q_OBJECT

 public:
  explicit GraphLoader(QObject* parent = nullptr);
  // Cancels and waits for the worker; a result still being built is dropped.
  ~GraphLoader() override;

  // Starts loading `path` and returns at once; a newer load() or cancel() supersedes it (its result never comes).
  // `inputShapes` fix those inputs' shapes for shape inference (kiln::inspectModel): concrete dimensions downstream;
  // a shape the engine refuses (unknown input, other rank) fails the load with its message.
  void load(const QString& path, const InputShapes& inputShapes = {});
  // Cancels the partition analysis in flight (the engine's CancellationToken) and drops its result.
  void cancel();
  bool isBusy() const { return busy_; }
  // The options the partition analysis runs with: kiln.execution_providers=vulkan,cpu, as `kiln compile` asks.
  // Asking explicitly lets a CPU-type Vulkan device (lavapipe) count, so the view shows what the Vulkan EP takes.
  static SessionOptions partitionOptions();

 signals:
  void progress(const QString& message);
  // `loadMs`: inspect + analyze + EPContext inspection, wall time on the worker.
  void loaded(std::shared_ptr<const kiln::bridge::GraphDocument> document, double loadMs);
  void failed(const QString& path, const QString& message);

 private:
  QThread thread_;
  QObject* workerContext_;
  std::atomic<quint64> latestRequest_{0};
  std::shared_ptr<CancellationToken> token_;
  bool busy_ = false;
};

}  // namespace kiln::bridge
