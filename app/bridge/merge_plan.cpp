#include "merge_plan.h"

#include <QFileInfo>
#include <QHash>
#include <QSet>

#include <exception>

#include "value_format.h"

namespace kiln::bridge {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

QString inputLabel(int index) { return QStringLiteral("input %1").arg(index + 1); }

// Records `name` as defined by `model`; a second model defining it is a conflict, spelled as the engine does.
void claim(QHash<QString, int>& owners, const QString& name, int model, const char* what, MergePreview& preview) {
  if (name.isEmpty()) return;
  const auto it = owners.constFind(name);
  if (it == owners.constEnd()) {
    owners.insert(name, model);
  } else if (it.value() != model) {
    preview.conflicts << QStringLiteral("%1 '%2' (%3 and %4)")
                             .arg(QLatin1String(what), name, inputLabel(model), inputLabel(it.value()));
    if (!preview.conflictingNames.contains(name)) preview.conflictingNames << name;
  }
}

}  // namespace

QString defaultMergePrefix(const QString& ctxPath) {
  QString stem = QFileInfo(ctxPath).completeBaseName();
  if (stem.endsWith(QStringLiteral("_ctx")) && stem.size() > 4) stem.chop(4);
  return stem + QLatin1Char('_');
}

MergePreview computeMergePreview(const QList<MergeModelEntry>& models, const QList<MergeConnection>& connections) {
  MergePreview preview;
  if (models.size() < 2) preview.problems << QStringLiteral("pick at least two ctx models to merge");

  QHash<QString, int> valueOwners, nodeOwners, graphOwners;
  QHash<QString, const ValueMetadata*> outputs, inputs;  // prefixed name -> metadata, for connections
  QHash<QString, int> outputModel, inputModel;
  for (int i = 0; i < models.size(); ++i) {
    const MergeModelEntry& entry = models[i];
    const QString label = QStringLiteral("%1 (%2)").arg(inputLabel(i), QFileInfo(entry.path).fileName());
    if (!entry.error.isEmpty()) {
      preview.problems << QStringLiteral("%1: %2").arg(label, entry.error);
      continue;
    }
    if (!entry.info) {
      preview.problems << QStringLiteral("%1 is still being read").arg(label);
      continue;
    }
    const EpContextModelInfo& info = *entry.info;
    const QString& prefix = entry.prefix;
    auto rename = [&](const std::string& name) { return name.empty() ? QString() : prefix + qs(name); };

    // The values this model defines: its graph inputs, what its EPContext nodes produce and its graph outputs
    // (produced by some node, EPContext or CPU fallback). A set first, so one model never conflicts with itself.
    QSet<QString> defined;
    for (const auto& v : info.inputs) {
      defined.insert(rename(v.name));
      preview.inputs << MergeValue{rename(v.name), formatValueType(v), i};
      inputs.insert(rename(v.name), &v);
      inputModel.insert(rename(v.name), i);
    }
    for (const auto& v : info.outputs) {
      defined.insert(rename(v.name));
      preview.outputs << MergeValue{rename(v.name), formatValueType(v), i};
      outputs.insert(rename(v.name), &v);
      outputModel.insert(rename(v.name), i);
    }
    QSet<QString> partitions;
    for (const auto& node : info.nodes) {
      MergeNode merged;
      merged.name = rename(node.name);
      merged.partition = rename(node.partitionName);
      merged.model = i;
      for (const auto& in : node.inputs) merged.inputs << rename(in);
      for (const auto& out : node.outputs) {
        merged.outputs << rename(out);
        defined.insert(rename(out));
      }
      claim(nodeOwners, merged.name, i, "node", preview);
      partitions.insert(merged.partition);
      preview.nodes << merged;
    }
    for (const QString& name : defined) claim(valueOwners, name, i, "value", preview);
    for (const QString& name : partitions) claim(graphOwners, name, i, "graph", preview);
  }
  preview.conflicts.sort();

  QSet<QString> connectedInputs;
  for (const MergeConnection& c : connections) {
    const QString what = QStringLiteral("%1 \u2192 %2: ").arg(c.from, c.to);
    const ValueMetadata* from = outputs.value(c.from);
    const ValueMetadata* to = inputs.value(c.to);
    if (!from) {
      preview.connectionErrors << what + QStringLiteral("'%1' is not an output of any input model").arg(c.from);
    } else if (!to) {
      preview.connectionErrors << what + QStringLiteral("'%1' is not a graph input of any input model").arg(c.to);
    } else if (outputModel.value(c.from) == inputModel.value(c.to)) {
      preview.connectionErrors << what + QStringLiteral("both belong to the same input model");
    } else if (connectedInputs.contains(c.to)) {
      preview.connectionErrors << what + QStringLiteral("'%1' is already fed by another connection").arg(c.to);
    } else if (from->dtype != DataType::UNDEFINED && to->dtype != DataType::UNDEFINED && from->dtype != to->dtype) {
      preview.connectionErrors << what + QStringLiteral("%1 output into a %2 input")
                                             .arg(elementTypeName(from->dtype), elementTypeName(to->dtype));
    } else {
      connectedInputs.insert(c.to);
    }
  }
  preview.inputs.removeIf([&](const MergeValue& v) { return connectedInputs.contains(v.name); });
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
