#include "model_loader.h"

#include <QElapsedTimer>

#include <exception>

namespace kiln::bridge {

ModelLoader::ModelLoader(QObject* parent) : QObject(parent), workerContext_(new QObject) {
  thread_.setObjectName(QStringLiteral("kiln-model-loader"));
  workerContext_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, workerContext_, &QObject::deleteLater);
  thread_.start();
}

ModelLoader::~ModelLoader() {
  // Results posted back to `this` after this point are discarded by Qt together with the object.
  latestRequest_ = ~quint64{0};
  thread_.quit();
  thread_.wait();
}

void ModelLoader::load(const QString& path) {
  const quint64 request = ++latestRequest_;
  busy_ = true;
  QMetaObject::invokeMethod(workerContext_, [this, request, path] {
    // A request superseded while it waited in the queue is not worth parsing.
    if (request != latestRequest_) return;
    QElapsedTimer timer;
    timer.start();
    Result<ModelInfo> result = Status(StatusCode::FAIL, "not run");
    try {
      result = inspectModel(path.toStdString());
    } catch (const std::exception& e) {
      // The engine API does not throw, but std::bad_alloc on a huge model must not terminate the app.
      result = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
    }
    const double loadMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    QMetaObject::invokeMethod(
        this, [this, request, path, result = std::move(result), loadMs] { deliver(request, path, result, loadMs); },
        Qt::QueuedConnection);
  });
}

void ModelLoader::deliver(quint64 request, const QString& path, const Result<ModelInfo>& result, double loadMs) {
  if (request != latestRequest_) return;
  busy_ = false;
  if (result.isOk()) {
    emit loaded(result.value(), loadMs);
  } else {
    emit failed(path, QString::fromStdString(result.status().toString()));
  }
}

}  // namespace kiln::bridge
