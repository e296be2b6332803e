// The Compare panel's engine work: one model under two configurations (kiln/compare.h) on a worker thread with
// progress and cancellation, and per-node data (`kiln compare --node-data`, `kiln run --profile`) read from files.
// Results arrive as the same JSON fields `kiln compare --json` writes (app/common/compare_json.h), turned into rows.
#pragma once

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>
#include <memory>

#include "engine_worker_thread.h"
#include "kiln/compare.h"
#include "kiln/progress.h"
#include "kiln/run_options.h"

namespace kiln::bridge {

// One side as the panel sets it up: a model file run by a Kiln session on `providers` ("cpu", "vulkan",
// "vulkan,cpu"; "" for the session's default).
struct CompareConfig {
  QString label;
  QString modelPath;
  QString providers;
};

struct CompareRequest {
  CompareConfig side, reference;
  QStringList shapes;  // "NAME=1x3x640x640" for inputs with free dimensions (both sides)
  Tolerance tolerance;
  unsigned seed = 0;
  bool perNode = true;  // also compare every node's outputs (per-node data and the first divergence)
};

// A profiled run of one model (kiln/run_profile.h: CPU op times, Vulkan partitions timed as units and, with the
// kiln.vulkan.profile=1 the session gets, each partition node's device time): `runs` runs on `providers`, the last
// one profiled, so first-run costs (pipeline compiles) stay out of it.
struct ProfileRequest {
  QString modelPath;
  QString providers;   // as CompareConfig::providers
  QStringList shapes;  // "NAME=1x3x640x640" for inputs with free dimensions
  QStringList inputs;  // "NAME=FILE" (.npy or .pb TensorProto); the others are random from `seed`
  unsigned seed = 0;
  int runs = 2;
};

// One row of the per-output table, as `kiln compare --json` reports the output.
struct OutputRow {
  QString name, dtype, shape;
  bool passed = false;
  QString problem;  // "missing", "shape mismatch", "dtype mismatch", "unsupported type" or ""
  double maxAbsError = 0, maxRelError = 0, meanAbsError = 0, cosineSimilarity = 1, fractionBeyond = 0;
  qint64 elements = 0, beyondTolerance = 0;
};

// One node's numbers from per-node data (node_data.h).
struct NodeMetricRow {
  QString node, opType, graph;
  QMap<QString, double> metrics;  // "time_ms", "max_abs_error", ...
  bool firstDivergence = false;
  // Compare data: counts of |difference| per fixed decade bin (kiln::errorHistogramLowerEdge), over the node's
  // outputs; empty for profiles and for files written before the CLI wrote `abs_error_histogram`.
  QVector<qint64> errorHistogram;
  QString executionProvider;  // profiles: the EP that ran the node ("" when the data does not say)
};

struct NodeMetrics {
  QString kind;   // "profile" or "compare"
  QString model;  // the model the node names refer to
  QString modelHash, modelSourceHash;  // its identity (app/common/node_data.h); "" when the data does not say
  QList<NodeMetricRow> nodes;
  // Every metric some node has, sorted.
  QStringList metricNames() const;
};

struct CompareResults {
  QString sideLabel, referenceLabel;
  QList<OutputRow> outputs;
  NodeMetrics nodes;        // empty unless per-node comparison ran (or a node-data file was loaded)
  QString firstDivergence;  // the first diverging node's name; "" when none (or not looked for)
  // Why per-node comparison did not run although asked (a compiled ctx model keeps its intermediate values in the
  // context binary, say); the per-output table stands. "" otherwise.
  QString perNodeProblem;
  bool passed() const;
};

// Reads a per-node data file (kiln-node-data v1) or a `kiln compare --json` report (its outputs, and its
// first_divergence when present). INVALID_ARGUMENT naming what is wrong; NO_SUCHFILE when it cannot be opened.
Result<CompareResults> loadCompareFile(const QString& path);

class CompareJob : public QObject {
  Q_OBJECT

 public:
  explicit CompareJob(QObject* parent = nullptr);
  // Cancels a running comparison and waits for it to stop. Nothing is emitted after this.
  ~CompareJob() override;

  // Starts on a new thread and returns at once; false (nothing started) while one still runs.
  bool start(const CompareRequest& request);
  // Starts a profiled run the same way: finished() brings its per-node times (NodeMetrics kind "profile", metric
  // "time_ms", as `kiln run --profile` writes them) and no outputs. Progress stages "inputs", "session", "profile".
  bool startProfile(const ProfileRequest& request);
  // Asks the running comparison or profile to stop (a profiled run in progress ends at once); it ends with
  // failed("CANCELLED", ...). Thread-safe.
  void cancel();
  bool isRunning() const { return worker_.isRunning(); }

 signals:
  // Emitted on the worker thread (queued to receivers elsewhere): "inputs", "run", "bisect" with done/total.
  void progress(const QString& stage, qint64 done, qint64 total);
  void finished(const kiln::bridge::CompareResults& results);
  void failed(const QString& code, const QString& message);

 private:
  bool startWork(const std::function<Result<CompareResults>(const ProgressSink&)>& work);

  std::shared_ptr<RunOptions> runOptions_;  // a profile's runs: cancel() terminates the one in progress
  // After runOptions_, so it is destroyed (its run cancelled and waited for) first.
  EngineWorkerThread<CompareResults> worker_;
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::CompareResults)
