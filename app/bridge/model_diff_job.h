// kiln-studio's model diff off the UI thread: kiln::diffModels on an EngineWorkerThread, its result turned into the
// diff view's rows (model_diff_rows.h) there too, so a big model never freezes the window. The newest request wins:
// a start() while one runs replaces it, and only the last one reports.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <optional>
#include <utility>

#include "engine_worker_thread.h"
#include "model_diff_rows.h"

namespace kiln::bridge {

class ModelDiffJob : public QObject {
  Q_OBJECT

 public:
  explicit ModelDiffJob(QObject* parent = nullptr);
  // Waits for a running diff (diffModels has no cancellation point); nothing is emitted after this.
  ~ModelDiffJob() override;

  // Diffs `pathA` against `pathB` on a worker thread and returns at once; finished() or failed() follows.
  void start(const QString& pathA, const QString& pathB);
  bool isRunning() const { return worker_.isRunning(); }

 signals:
  void finished(const kiln::bridge::ModelDiffRows& diff);
  // The engine's status code ("NO_SUCHFILE", "INVALID_PROTOBUF", "INVALID_GRAPH") and message.
  void failed(const QString& code, const QString& message);

 private:
  void startNow(const QString& pathA, const QString& pathB);
  // A request that came while a diff ran: it runs next, and that diff's outcome is dropped.
  bool supersede();

  std::optional<std::pair<QString, QString>> next_;
  EngineWorkerThread<ModelDiffRows> worker_;
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::ModelDiffRows)
