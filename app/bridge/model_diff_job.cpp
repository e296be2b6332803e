#include "model_diff_job.h"

#include "kiln/model_diff.h"

namespace kiln::bridge {

ModelDiffJob::ModelDiffJob(QObject* parent) : QObject(parent) { qRegisterMetaType<kiln::bridge::ModelDiffRows>(); }

ModelDiffJob::~ModelDiffJob() = default;  // the worker waits for a running diff

void ModelDiffJob::start(const QString& pathA, const QString& pathB) {
  if (worker_.isRunning()) {
    next_ = std::make_pair(pathA, pathB);
    return;
  }
  startNow(pathA, pathB);
}

void ModelDiffJob::startNow(const QString& pathA, const QString& pathB) {
  next_.reset();
  worker_.start(
      this, QStringLiteral("kiln-diff"),
      [a = pathA.toStdString(), b = pathB.toStdString()](const ProgressSink&) -> Result<ModelDiffRows> {
        KILN_ASSIGN_OR_RETURN(ModelDiff diff, diffModels(a, b));
        return modelDiffRows(diff);
      },
      [](const ProgressEvent&) {},
      [this](const ModelDiffRows& diff) {
        if (!supersede()) emit finished(diff);
      },
      [this](const QString& code, const QString& message) {
        if (!supersede()) emit failed(code, message);
      },
      "the diff did not run");
}

bool ModelDiffJob::supersede() {
  if (!next_) return false;
  const auto [a, b] = *next_;
  startNow(a, b);
  return true;
}

}  // namespace kiln::bridge
