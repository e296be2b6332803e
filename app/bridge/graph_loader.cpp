#include "graph_loader.h"

#include <QElapsedTimer>

#include <algorithm>
#include <exception>

#include "session_flags.h"


namespace kiln::bridge {

namespace {

// A compiled (ctx) model needs no partition analysis, and the analysis cannot take one: each EPContext node is one
// compiled partition of the EP it names, and every other node runs on the CPU EP (consecutive ones grouped), as
// Session::create runs the model.
PartitionReport partitionsOfCompiledModel(const ModelInfo& info, const EpContextModelInfo& ctx) {
  const std::string vulkan = app::kVulkanProviderName, cpu = app::kCpuProviderName;
  PartitionReport report;
  report.executionProviders = {vulkan, cpu};
  GraphPartitionReport graph;
  graph.path = "main";
  int cpuPartitions = 0;
  for (const NodeInfo& node : info.nodes) {
    const std::string label =
        (node.name.empty() ? std::string() : "'" + node.name + "' ") + "(" + node.opType + ")";
    const auto ctxNode = std::find_if(ctx.nodes.begin(), ctx.nodes.end(), [&node](const EpContextNodeInfo& n) {
      return n.graph == "main" && n.name == node.name && node.opType == "EPContext";
    });
    NodePlacement placement;
    placement.node = label;
    placement.opType = node.opType;
    if (ctxNode != ctx.nodes.end()) {
      placement.executionProvider = ctxNode->vulkan ? vulkan : ctxNode->source;
      ReportedPartition partition;
      partition.name = ctxNode->partitionName.empty() ? node.name : ctxNode->partitionName;
      partition.executionProvider = placement.executionProvider;
      partition.compiled = true;
      partition.nodes = {label};
      partition.inputs = ctxNode->inputs;
      partition.outputs = ctxNode->outputs;
      graph.partitions.push_back(std::move(partition));
    } else {
      placement.executionProvider = cpu;
      if (graph.partitions.empty() || graph.partitions.back().compiled) {
        ReportedPartition partition;
        partition.name = "cpu_" + std::to_string(cpuPartitions++);
        partition.executionProvider = cpu;
        graph.partitions.push_back(std::move(partition));
      }
      graph.partitions.back().nodes.push_back(label);
    }
    graph.nodes.push_back(std::move(placement));
  }
  report.graphs.push_back(std::move(graph));
  return report;
}

}  // namespace

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

void GraphLoader::load(const QString& path) {
  cancel();
  const quint64 request = latestRequest_;
  auto token = std::make_shared<CancellationToken>();
  token_ = token;
  busy_ = true;
  emit progress(tr("Reading %1").arg(path));
  QMetaObject::invokeMethod(workerContext_, [this, request, path, token] {
    if (request != latestRequest_) return;  // superseded while it waited in the queue
    QElapsedTimer timer;
    timer.start();
    std::shared_ptr<const GraphDocument> document;
    QString error;
    try {
      const std::string file = path.toStdString();
      Result<ModelInfo> info = inspectModel(file);
      if (!info.isOk()) {
        error = QString::fromStdString(info.status().toString());
      } else if (request == latestRequest_) {
        QMetaObject::invokeMethod(this, [this, request] {
          if (request == latestRequest_) emit progress(tr("Partitioning"));
        }, Qt::QueuedConnection);
        SessionOptions options = partitionOptions();
        options.progress.cancellation = token;
        std::optional<Result<EpContextModelInfo>> epContext;
        const bool hasEpContext = std::any_of(info.value().nodes.begin(), info.value().nodes.end(), [](const NodeInfo& n) {
          return n.opType == "EPContext" && n.domain == "com.microsoft";
        });
        if (hasEpContext) epContext = inspectEpContextModel(file);
        const Result<PartitionReport> report = epContext && epContext->isOk()
                                                   ? Result<PartitionReport>(partitionsOfCompiledModel(info.value(), epContext->value()))
                                                   : analyzePartitions(file, options);
        document = std::make_shared<const GraphDocument>(GraphDocument::build(info.value(), report, epContext));
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
