// ModelLoader: runs kiln::inspectModel on a worker thread and reports the result on the owner's thread.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>

#include "kiln/model_info.h"

Q_DECLARE_METATYPE(kiln::ModelInfo)

namespace kiln::bridge {

class ModelLoader : public QObject {
  Q_OBJECT

 public:
  explicit ModelLoader(QObject* parent = nullptr);
  // Waits for a running inspection to finish; its result is dropped.
  ~ModelLoader() override;

  // Starts inspecting `path` and returns at once. A later load() supersedes this one: only the newest request
  // reports, so a slow earlier file can never overwrite a newer one.
  void load(const QString& path);
  // True from load() until the newest request has reported.
  bool isBusy() const { return busy_; }

 signals:
  // Emitted on this object's thread. `loadMs` is the wall time of inspectModel (parse + shape inference).
  void loaded(const kiln::ModelInfo& info, double loadMs);
  // Emitted on this object's thread with the engine's message ("NO_SUCHFILE: ...").
  void failed(const QString& path, const QString& message);

 private:
  void deliver(quint64 request, const QString& path, const Result<ModelInfo>& result, double loadMs);

  QThread thread_;
  QObject* workerContext_;  // lives in thread_; queued calls to it run there
  std::atomic<quint64> latestRequest_{0};
  bool busy_ = false;
};

}  // namespace kiln::bridge
