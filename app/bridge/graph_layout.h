// GraphLayout: lays out a VisibleGraph with Graphviz's `dot`, run as a separate process (`dot -Tjson0`); graphs
// of more than kMaxDotVertices vertices, which dot would take tens of seconds over, get the built-in layered
// layout (layered_layout.h) on the worker thread instead. Running it
// as a process keeps Graphviz (EPL) out of the studio binary, and killing it is the cancel. Everything is
// asynchronous: the DOT text goes to dot's stdin, its JSON is parsed on a pool thread, and the result comes back
// on the owner's thread as a signal.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QMultiHash>
#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QThreadPool>
#include <QVector>

#include <atomic>

#include "graph_document.h"

class QProcess;

namespace kiln::bridge {

// Positions in points (1/72 inch, as dot gives them) with y growing downwards, as Qt draws.
struct GraphLayoutResult {
  QVector<QRectF> vertices;          // per VisibleGraph vertex
  // Per VisibleGraph edge: the B-spline control points (first point, then 3 per segment) and the arrow tip.
  QVector<QVector<QPointF>> edgeSplines;
  QVector<QPointF> edgeArrowTips;    // null point when dot drew no arrowhead
  // Expanded cluster index -> its box (one each).
  QMultiHash<int, QRectF> clusterBoxes;
  // Expanded group index -> its box, inside its cluster's.
  QHash<int, QRectF> groupBoxes;
  QRectF bounds;
  bool layered = false;  // laid out by layeredLayout (no dot)
  double dotMs = 0;    // the dot process, start to exit
  double totalMs = 0;  // DOT text written to result delivered
};

class GraphLayout : public QObject {
  Q_OBJECT

 public:
  // Above this many vertices the layered layout runs instead of dot (dot: 1.5 s for 3000, 20 s for 10,000).
  static constexpr int kMaxDotVertices = 3500;

  explicit GraphLayout(QObject* parent = nullptr);
  // Kills a running dot.
  ~GraphLayout() override;

  // The DOT text for `graph`: fixed-size boxes (the view draws the labels), expanded clusters as DOT clusters and
  // expanded groups as DOT clusters inside them.
  static QByteArray toDot(const VisibleGraph& graph, const GraphDocument& document);
  // Parses `dot -Tjson0` output for `graph`. Returns false with `error` set when the JSON does not fit the graph.
  static bool parseJson(const QByteArray& json, const VisibleGraph& graph, GraphLayoutResult* result, QString* error);
  // The dot program: $KILN_DOT when set, else `dot` on PATH, else /usr/bin/dot; "" when none exists.
  static QString dotProgram();

  // Starts laying out `graph` and returns at once; a running layout is cancelled first (its result never comes).
  void start(const VisibleGraph& graph, const GraphDocument& document);
  // Kills dot and drops a result being parsed: neither finished() nor failed() follows.
  void cancel();
  bool isRunning() const { return running_; }

 signals:
  void progress(const QString& message);
  void finished(const kiln::bridge::GraphLayoutResult& result);
  void failed(const QString& message);

 private:
  void onDotFinished(quint64 generation, QProcess* process, const VisibleGraph& graph);

  QProcess* process_ = nullptr;
  std::atomic<quint64> generation_{0};
  bool running_ = false;
  QElapsedTimer timer_;
  QThreadPool parsePool_;  // its own pool: the destructor waits for a parse still running, not for others' tasks
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::GraphLayoutResult)
