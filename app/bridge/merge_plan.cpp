#include "merge_plan.h"

#include <QFileInfo>

#include <exception>

#include "value_format.h"

namespace kiln::bridge {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

QStringList qsList(const std::vector<std::string>& items) {
  QStringList list;
  for (const auto& item : items) list << qs(item);
  return list;
}

}  // namespace

QString defaultMergePrefix(const QString& ctxPath) {
  QString stem = QFileInfo(ctxPath).completeBaseName();
  if (stem.endsWith(QStringLiteral("_ctx")) && stem.size() > 4) stem.chop(4);
  return stem + QLatin1Char('_');
}

MergePreview computeMergePreview(const QList<MergeModelEntry>& models, const QList<MergeConnection>& connections) {
  MergePreview preview;
  // The wizard's own state first: entries that failed or are still being read. The engine plans the rest.
  std::vector<MergePlanInput> inputs;
  std::vector<int> entryOf;  // plan input -> index into `models`
  for (int i = 0; i < models.size(); ++i) {
    const MergeModelEntry& entry = models[i];
    const QString label = QStringLiteral("input %1 (%2)").arg(i + 1).arg(QFileInfo(entry.path).fileName());
    if (!entry.error.isEmpty()) {
      preview.problems << QStringLiteral("%1: %2").arg(label, entry.error);
    } else if (!entry.info) {
      preview.problems << QStringLiteral("%1 is still being read").arg(label);
    } else {
      inputs.push_back({entry.info, entry.prefix.toStdString()});
      entryOf.push_back(i);
    }
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const MergeConnection& c : connections) pairs.emplace_back(c.from.toStdString(), c.to.toStdString());
  const MergePlan plan = planMerge(inputs, pairs);
  if (preview.problems.isEmpty()) preview.problems << qsList(plan.problems);

  auto model = [&](int input) { return entryOf[static_cast<size_t>(input)]; };
  for (const auto& v : plan.inputs) preview.inputs << MergeValue{qs(v.value.name), formatValueType(v.value), model(v.input)};
  for (const auto& v : plan.outputs) preview.outputs << MergeValue{qs(v.value.name), formatValueType(v.value), model(v.input)};
  for (const auto& node : plan.nodes) {
    if (!node.epContext) continue;  // the wizard lists the EPContext nodes
    preview.nodes << MergeNode{qs(node.name), qs(node.partition), qsList(node.inputs), qsList(node.outputs), model(node.input)};
  }
  // Conflicts name inputs by their position among the readable ones: the same as the wizard's while all are.
  preview.conflicts = qsList(plan.conflicts);
  preview.conflictingNames = qsList(plan.conflictingNames);
  for (const auto& c : plan.connections) {
    if (!c.problem.empty()) preview.connectionErrors << QStringLiteral("%1 \u2192 %2: %3").arg(qs(c.from), qs(c.to), qs(c.problem));
  }
  return preview;
}

MergeWorker::MergeWorker(QObject* parent) : QObject(parent), workerContext_(new QObject) {
  qRegisterMetaType<std::shared_ptr<const EpContextModelInfo>>();
  qRegisterMetaType<MergeOutcome>();
  thread_.setObjectName(QStringLiteral("kiln-merge"));
  workerContext_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, workerContext_, &QObject::deleteLater);
  thread_.start();
}

MergeWorker::~MergeWorker() {
  closing_ = true;  // queued inspections are skipped; a merge that started finishes (all files or none)
  thread_.quit();
  thread_.wait();
}

void MergeWorker::inspectModel(const QString& path) {
  QMetaObject::invokeMethod(workerContext_, [this, path] {
    if (closing_) return;
    Result<EpContextModelInfo> result = Status(StatusCode::FAIL, "not run");
    try {
      result = inspectEpContextModel(path.toStdString());
    } catch (const std::exception& e) {
      result = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
    }
    if (result.isOk() && result->nodes.empty()) {
      result = Status(StatusCode::INVALID_ARGUMENT, path.toStdString() + " has no EPContext node: compile it first");
    }
    std::shared_ptr<const EpContextModelInfo> info;
    QString error;
    if (result.isOk()) {
      info = std::make_shared<const EpContextModelInfo>(std::move(result).value());
    } else {
      error = QString::fromStdString(result.status().toString());
    }
    QMetaObject::invokeMethod(
        this,
        [this, path, info, error] {
          if (info) {
            emit modelInspected(path, info);
          } else {
            emit modelFailed(path, error);
          }
        },
        Qt::QueuedConnection);
  });
}

void MergeWorker::merge(const QList<MergeModelEntry>& models, const QString& outputPath,
                        const QList<MergeConnection>& connections) {
  std::vector<MergeInput> inputs;
  for (const auto& m : models) inputs.push_back({m.path.toStdString(), m.prefix.toStdString()});
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& c : connections) pairs.emplace_back(c.from.toStdString(), c.to.toStdString());
  merging_ = true;
  QMetaObject::invokeMethod(workerContext_, [this, inputs, pairs, outputPath] {
    Result<MergeResult> result = Status(StatusCode::FAIL, "not run");
    try {
      // The engine checks every conflict, connection and output path before writing, and writes the model and
      // its binary through one transaction: a failure leaves no file behind and the inputs untouched.
      result = mergeEpContextModels(inputs, outputPath.toStdString(), pairs);
    } catch (const std::exception& e) {
      result = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, result = std::move(result)] {
          merging_ = false;
          if (!result.isOk()) {
            emit mergeFailed(QString::fromStdString(result.status().toString()));
            return;
          }
          MergeOutcome outcome;
          outcome.result = result.value();
          outcome.filesWritten << QString::fromStdString(outcome.result.outputModelPath)
                               << QString::fromStdString(outcome.result.binaryPath);
          emit merged(outcome);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace kiln::bridge
