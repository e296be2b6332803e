// The merge wizard's plan: which ctx models, their name prefixes and the connections between them, previewed
// (the merged graph's inputs, outputs and EPContext nodes, name conflicts, connection errors) by the engine's
// planMerge over inspectEpContextModel results before anything is written; and the worker that inspects the
// inputs and runs mergeEpContextModels off the UI thread.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include <atomic>
#include <memory>

#include "graph_document.h"
#include "kiln/epcontext.h"

namespace kiln::bridge {

// One input of the merge.
struct MergeModelEntry {
  QString path;
  QString prefix;
  std::shared_ptr<const EpContextModelInfo> info;  // null until inspected (or when inspection failed)
  QString error;                                   // the engine's message when inspection failed
};

// Feeds graph output `from` of one model to graph input `to` of another (both prefixed names).
struct MergeConnection {
  QString from, to;
  bool operator==(const MergeConnection& other) const { return from == other.from && to == other.to; }
};

struct MergeValue {
  QString name;  // prefixed
  QString type;  // "float32[1,3,32,32]"
  int model = 0;  // index into the plan's models
};

struct MergeNode {
  QString name, partition;  // prefixed
  QStringList inputs, outputs;
  int model = 0;
};

struct MergePreview {
  QList<MergeValue> inputs, outputs;  // of the merged graph: connected inputs are no longer graph inputs
  QList<MergeNode> nodes;             // EPContext nodes
  QStringList conflicts;              // names that two inputs would both define after prefixing
  QStringList conflictingNames;       // the names themselves, so views can mark the rows they appear in
  QStringList connectionErrors;
  QStringList problems;  // inputs that are missing, not inspected yet, or unreadable; fewer than two inputs
  bool ok() const { return conflicts.isEmpty() && connectionErrors.isEmpty() && problems.isEmpty(); }
};

// "dir/det_ctx.onnx" -> "det_": the file's stem without a trailing "_ctx", plus "_".
QString defaultMergePrefix(const QString& ctxPath);

// The engine's merge plan (planMerge) of the readable entries, for the wizard's tables: the merged graph as
// mergeEpContextModels would build it and every reason it would refuse (conflicts among CPU-fallback nodes and
// initializers included), plus the entries that failed or are still being read.
MergePreview computeMergePreview(const QList<MergeModelEntry>& models, const QList<MergeConnection>& connections);

// The merged model's graph as the graph view draws it, built from the plan over the inspected inputs without
// writing anything: the merged graph inputs and outputs, every main-graph node of every input with its prefixed name
// (each EPContext node a compiled partition of its own, named by its prefixed graph and run by its EP; other nodes
// on the CPU EP) and one Identity per valid connection, as mergeEpContextModels writes them. nullptr while fewer
// than two inputs are readable.
std::shared_ptr<const GraphDocument> mergedGraphDocument(const QList<MergeModelEntry>& models,
                                                         const QList<MergeConnection>& connections);

// The outcome of a write, for the wizard's last page.
struct MergeOutcome {
  MergeResult result;
  QStringList filesWritten;
};

// Inspects merge inputs and runs the merge on one worker thread; reports on the owner's thread. Every request
// reports (the wizard inspects each model it lists).
class MergeWorker : public QObject {
  Q_OBJECT

 public:
  explicit MergeWorker(QObject* parent = nullptr);
  // Waits for a running request (a merge writes through a transaction: it completes or leaves nothing behind).
  ~MergeWorker() override;

  // inspectEpContextModel(path); a model without EPContext nodes is reported as a failure.
  void inspectModel(const QString& path);
  void merge(const QList<MergeModelEntry>& models, const QString& outputPath, const QList<MergeConnection>& connections);
  bool isMerging() const { return merging_; }

 signals:
  void modelInspected(const QString& path, std::shared_ptr<const kiln::EpContextModelInfo> info);
  void modelFailed(const QString& path, const QString& message);
  void merged(const kiln::bridge::MergeOutcome& outcome);
  void mergeFailed(const QString& message);

 private:
  QThread thread_;
  QObject* workerContext_;
  std::atomic<bool> closing_{false};
  bool merging_ = false;
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(std::shared_ptr<const kiln::EpContextModelInfo>)
Q_DECLARE_METATYPE(kiln::bridge::MergeOutcome)
