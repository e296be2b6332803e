#include "merge_plan.h"

#include <QFileInfo>

#include <exception>
#include <map>
#include <set>

#include "session_flags.h"
#include "value_format.h"

namespace kiln::bridge {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

QStringList qsList(const std::vector<std::string>& items) {
  QStringList list;
  for (const auto& item : items) list << qs(item);
  return list;
}

// The readable entries of `models` as the engine's plan inputs.
std::vector<MergePlanInput> readableInputs(const QList<MergeModelEntry>& models) {
  std::vector<MergePlanInput> inputs;
  for (const MergeModelEntry& entry : models) {
    if (entry.error.isEmpty() && entry.info) inputs.push_back({entry.info, entry.prefix.toStdString()});
  }
  return inputs;
}

std::vector<std::pair<std::string, std::string>> connectionPairs(const QList<MergeConnection>& connections) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const MergeConnection& c : connections) pairs.emplace_back(c.from.toStdString(), c.to.toStdString());
  return pairs;
}

// A node as the partition report spells it (kiln::NodePlacement::node): "'conv1' (Conv)", or "(Conv)" unnamed.
std::string placementLabel(const NodeInfo& node) {
  return node.name.empty() ? "(" + node.opType + ")" : "'" + node.name + "' (" + node.opType + ")";
}

// `nodes` in an order where every value is produced before it is read (the connections may feed a later input's
// output to an earlier one); nodes caught in a cycle keep their place at the end.
std::vector<NodeInfo> topologicalOrder(std::vector<NodeInfo> nodes) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& output : nodes[i].outputs) producer[output] = i;
  }
  std::vector<NodeInfo> ordered;
  std::vector<bool> placed(nodes.size(), false);
  std::set<std::string> available;
  for (bool progress = true; progress && ordered.size() < nodes.size();) {
    progress = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (placed[i]) continue;
      const bool ready = std::all_of(nodes[i].inputs.begin(), nodes[i].inputs.end(), [&](const std::string& in) {
        return in.empty() || !producer.count(in) || available.count(in);
      });
      if (!ready) continue;
      placed[i] = progress = true;
      for (const auto& output : nodes[i].outputs) available.insert(output);
      ordered.push_back(nodes[i]);
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!placed[i]) ordered.push_back(nodes[i]);
  }
  return ordered;
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
  const MergePlan plan = planMergeOfInspected(inputs, connectionPairs(connections));
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

std::shared_ptr<const GraphDocument> mergedGraphDocument(const QList<MergeModelEntry>& models,
                                                         const QList<MergeConnection>& connections) {
  const std::vector<MergePlanInput> inputs = readableInputs(models);
  if (inputs.size() < 2) return nullptr;
  const MergePlan plan = planMergeOfInspected(inputs, connectionPairs(connections));

  ModelInfo info;
  for (const auto& v : plan.inputs) info.inputs.push_back(v.value);
  for (const auto& v : plan.outputs) info.outputs.push_back(v.value);
  for (const auto& value : info.inputs) info.values[value.name] = value;
  for (const auto& value : info.outputs) info.values[value.name] = value;
  // Who runs each node once merged: an EPContext node its input's EP (Vulkan, or a foreign source), the rest the CPU.
  std::map<std::string, std::string> executionProvider;  // prefixed node name -> EP
  std::map<std::string, std::string> partitionOf;        // prefixed EPContext node name -> prefixed partition
  std::vector<NodeInfo> nodes;
  for (const MergePlanNode& planned : plan.nodes) {
    NodeInfo node;
    node.name = planned.name;
    node.opType = planned.opType;
    node.domain = planned.epContext ? "com.microsoft" : "";
    node.inputs = planned.inputs;
    node.outputs = planned.outputs;
    std::string ep = app::kCpuProviderName;
    if (planned.epContext) {
      const MergePlanInput& input = inputs[static_cast<size_t>(planned.input)];
      ep.clear();
      for (const EpContextNodeInfo& ctx : input.model->nodes) {
        if (ctx.graph == GraphDocument::kMainPath && input.prefix + ctx.name == planned.name) {
          ep = ctx.vulkan ? std::string(app::kVulkanProviderName) : ctx.source;
        }
      }
      partitionOf[planned.name] = planned.partition;
    }
    executionProvider[planned.name] = ep;
    nodes.push_back(std::move(node));
  }
  // A connection the plan accepts becomes an Identity feeding the input it names (mergeEpContextModels' connect).
  for (const MergePlanConnection& c : plan.connections) {
    if (!c.problem.empty()) continue;
    NodeInfo identity;
    identity.name = "connect_" + c.from + "_to_" + c.to;
    identity.opType = "Identity";
    identity.inputs = {c.from};
    identity.outputs = {c.to};
    executionProvider[identity.name] = app::kCpuProviderName;
    nodes.push_back(std::move(identity));
  }
  info.nodes = topologicalOrder(std::move(nodes));

  // The partition report a session of the merged model gives: one compiled partition per EPContext node, runs of
  // other nodes on the CPU EP.
  PartitionReport report;
  report.executionProviders = {app::kVulkanProviderName, app::kCpuProviderName};
  GraphPartitionReport main;
  main.path = GraphDocument::kMainPath;
  int cpuRuns = 0;
  for (const NodeInfo& node : info.nodes) {
    const std::string label = placementLabel(node);
    const std::string& ep = executionProvider[node.name];
    main.nodes.push_back({label, node.opType, ep, {}});
    auto partition = partitionOf.find(node.name);
    if (partition != partitionOf.end()) {
      main.partitions.push_back({partition->second, ep, true, {label}, {}, {}, "merged", {}});
    } else if (!main.partitions.empty() && !main.partitions.back().compiled) {
      main.partitions.back().nodes.push_back(label);
    } else {
      main.partitions.push_back({"cpu_" + std::to_string(cpuRuns++), ep, false, {label}, {}, {}, {}, {}});
    }
  }
  report.graphs.push_back(std::move(main));
  return std::make_shared<const GraphDocument>(GraphDocument::build(info, report, std::nullopt));
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
    // The engine checks every conflict, connection and output path before writing, and writes the model and its
    // binary through one transaction: a failure leaves no file behind and the inputs untouched. (Returned from a
    // lambda, not assigned over a placeholder: GCC 12 saw the placeholder's Status as maybe uninitialized.)
    auto run = [&]() -> Result<MergeResult> {
      try {
        return mergeEpContextModels(inputs, outputPath.toStdString(), pairs);
      } catch (const std::exception& e) {
        return Status(StatusCode::RUNTIME_EXCEPTION, e.what());
      }
    };
    Result<MergeResult> result = run();
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
