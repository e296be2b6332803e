#include "graph_loader.h"

#include <QElapsedTimer>

#include <algorithm>
#include <exception>

#include "session_flags.h"
#include "kiln/epcontext.h"


namespace kiln::bridge {

GraphLoader::GraphLoader(QObject* parent) : QObject(parent), workerContext_(new QObject) {
  qRegisterMetaType<std::shared_ptr<const kiln::bridge::GraphDocument>>();
  thread_.setObjectName(QStringLiteral("kiln-graph-loader"));
  workerContext_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, workerContext_, &QObject::deleteLater);
  thread_.start();
}

GraphLoader::~GraphLoader() {
  cancel();
  thread_.quit();
  thread_.wait();
}

SessionOptions GraphLoader::partitionOptions() {
  SessionOptions options;
  // A fixed, valid entry: addConfigEntry cannot fail on it.
  (void)app::applyExecutionProviders(app::kGpuFirstProviders, options);
  return options;
}

void GraphLoader::cancel() {
  ++latestRequest_;
  if (token_) token_->cancel();
  token_.reset();
  busy_ = false;
}

void GraphLoader::load(const QString& path, const InputShapes& inputShapes) {
  cancel();
  const quint64 request = latestRequest_;
  auto token = std::make_shared<CancellationToken>();
  token_ = token;
  busy_ = true;
  emit progress(tr("Reading %1").arg(path));
  QMetaObject::invokeMethod(workerContext_, [this, request, path, token, inputShapes] {
    if (request != latestRequest_) return;  // superseded while it waited in the queue
    QElapsedTimer timer;
    timer.start();
    std::shared_ptr<const GraphDocument> document;
    QString error;
    try {
      const std::string file = path.toStdString();
      Result<ModelInfo> info = inspectModel(file, inputShapes);
      if (!info.isOk()) {
        error = QString::fromStdString(info.status().toString());
      } else if (request == latestRequest_) {
        QMetaObject::invokeMethod(this, [this, request] {
          if (request == latestRequest_) emit progress(tr("Partitioning"));
        }, Qt::QueuedConnection);
        SessionOptions options = partitionOptions();
        options.progress.cancellation = token;
        for (const auto& [name, dims] : inputShapes) options.setInputShape(name, dims);  // as a session would run
        std::optional<Result<EpContextModelInfo>> epContext;
        if (hasEpContextNodes(info.value())) epContext = inspectEpContextModel(file);
        // For a ctx model too: the engine reports its EPContext partitions and CPU-fallback nodes.
        const Result<PartitionReport> report = analyzePartitions(file, options);
        GraphDocument built = GraphDocument::build(info.value(), report, epContext);
        // Per-node data shows on this model only (or its compiled twin): the overlay compares identities.
        if (Result<ModelIdentity> identity = identifyModel(file); identity.isOk()) built.setModelIdentity(*identity);
        document = std::make_shared<const GraphDocument>(std::move(built));
      }
    } catch (const std::exception& e) {
      // The engine API does not throw, but std::bad_alloc on a huge model must not terminate the app.
      error = QStringLiteral("RUNTIME_EXCEPTION: %1").arg(QString::fromUtf8(e.what()));
    }
    const double loadMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    QMetaObject::invokeMethod(
        this,
        [this, request, path, document, error, loadMs] {
          if (request != latestRequest_) return;
          busy_ = false;
          token_.reset();
          if (document) {
            emit loaded(document, loadMs);
          } else {
            emit failed(path, error);
          }
        },
        Qt::QueuedConnection);
  });
}

}  // namespace kiln::bridge
