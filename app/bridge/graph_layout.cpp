#include "graph_layout.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>

#include <memory>

#include "layered_layout.h"

namespace kiln::bridge {

namespace {

// Above this many vertices dot's network-simplex passes dominate its time. Capping them (nslimit) and the
// crossing-minimization passes (mclimit) lays out the 3000-node benchmark graph in 1.5 s instead of 5 s, at the
// cost of a slightly wider drawing; smaller graphs get dot's full effort.
constexpr int kBigGraphVertices = 1000;

QPointF parsePoint(QStringView text, double height, bool* ok) {
  const qsizetype comma = text.indexOf(u',');
  if (comma < 0) {
    *ok = false;
    return {};
  }
  bool okX = false, okY = false;
  const double x = text.left(comma).toDouble(&okX);
  const double y = text.mid(comma + 1).toDouble(&okY);
  *ok = okX && okY;
  return {x, height - y};
}

QRectF parseBox(const QString& text, double height) {
  const QStringList parts = text.split(u',');
  if (parts.size() != 4) return {};
  const double x0 = parts[0].toDouble(), y0 = parts[1].toDouble(), x1 = parts[2].toDouble(),
               y1 = parts[3].toDouble();
  return QRectF(QPointF(x0, height - y1), QPointF(x1, height - y0));
}

}  // namespace

GraphLayout::GraphLayout(QObject* parent) : QObject(parent) {
  qRegisterMetaType<kiln::bridge::GraphLayoutResult>();
  parsePool_.setMaxThreadCount(1);
}

GraphLayout::~GraphLayout() {
  QProcess* process = process_;
  cancel();
  // A killed process is gone within milliseconds; waiting here keeps QProcess from warning about a running child.
  if (process) process->waitForFinished(2000);
  // Results the parse posts to `this` from now on are discarded with the object.
  parsePool_.waitForDone();
}

QString GraphLayout::dotProgram() {
  const QString configured = qEnvironmentVariable("KILN_DOT");
  if (!configured.isEmpty()) return QFileInfo(configured).isExecutable() ? configured : QString();
  const QString onPath = QStandardPaths::findExecutable(QStringLiteral("dot"));
  if (!onPath.isEmpty()) return onPath;
  const QString debian = QStringLiteral("/usr/bin/dot");
  return QFileInfo(debian).isExecutable() ? debian : QString();
}

QByteArray GraphLayout::toDot(const VisibleGraph& graph, const GraphDocument& document) {
  QByteArray dot;
  dot.reserve(graph.vertices.size() * 48 + graph.edges.size() * 16 + 256);
  dot += "digraph kiln {\n";
  dot += "  graph [rankdir=TB, nodesep=0.25, ranksep=0.4, margin=0.2";
  if (graph.vertices.size() > kBigGraphVertices) dot += ", nslimit=1, mclimit=0.2";
  dot += "];\n";
  dot += "  node [shape=box, fixedsize=true, label=\"\"];\n";
  auto vertexLine = [&](const VisibleGraph::Vertex& v) {
    dot += "  " + v.id.toLatin1() + " [width=" + QByteArray::number(v.widthIn, 'f', 2) +
           ", height=" + QByteArray::number(v.heightIn, 'f', 2) + "];\n";
  };
  // Members of each expanded cluster and group; a group's members are written inside its cluster's subgraph.
  QVector<QVector<int>> members(document.clusters().size()), groupMembers(document.groups().size());
  QVector<QVector<int>> groupsIn(document.clusters().size() + 1);  // by cluster + 1: index 0 is "no cluster"
  for (int g : graph.expandedGroups) groupsIn[document.groups()[g].cluster + 1].push_back(g);
  for (int i = 0; i < graph.vertices.size(); ++i) {
    const VisibleGraph::Vertex& v = graph.vertices[i];
    if (v.inGroup >= 0) {
      groupMembers[v.inGroup].push_back(i);
    } else if (v.inCluster >= 0) {
      members[v.inCluster].push_back(i);
    } else {
      vertexLine(v);
    }
  }
  // The label only reserves room at the top of the box for the view's own caption (as wide as the whole caption,
  // so it is never cut); names never reach DOT.
  auto openCluster = [&](const QByteArray& name, const QString& caption) {
    dot += "  subgraph cluster_" + name + " {\n    label=\"" + QByteArray(caption.size(), 'X') + "\"; fontsize=12;\n";
  };
  auto writeGroups = [&](int cluster) {
    for (int g : groupsIn[cluster + 1]) {
      openCluster("g" + QByteArray::number(g), document.groups()[g].caption());
      for (int i : groupMembers[g]) {
        dot += "  ";
        vertexLine(graph.vertices[i]);
      }
      dot += "  }\n";
    }
  };
  writeGroups(-1);
  for (int c : graph.expandedClusters) {
    openCluster(QByteArray::number(c), document.clusters()[c].caption());
    for (int i : members[c]) {
      dot += "  ";
      vertexLine(graph.vertices[i]);
    }
    writeGroups(c);
    dot += "  }\n";
  }
  for (const auto& e : graph.edges) {
    dot += "  " + graph.vertices[e.from].id.toLatin1() + " -> " + graph.vertices[e.to].id.toLatin1() + ";\n";
  }
  dot += "}\n";
  return dot;
}

bool GraphLayout::parseJson(const QByteArray& json, const VisibleGraph& graph, GraphLayoutResult* result,
                            QString* error) {
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (doc.isNull() || !doc.isObject()) {
    *error = QStringLiteral("dot wrote unreadable JSON: %1").arg(parseError.errorString());
    return false;
  }
  const QJsonObject root = doc.object();
  const QStringList bb = root.value(QStringLiteral("bb")).toString().split(u',');
  if (bb.size() != 4) {
    *error = QStringLiteral("dot's JSON has no bounding box");
    return false;
  }
  const double height = bb[3].toDouble();
  result->bounds = QRectF(0, 0, bb[2].toDouble(), height);

  QHash<QString, int> vertexById;
  for (int i = 0; i < graph.vertices.size(); ++i) vertexById.insert(graph.vertices[i].id, i);
  result->vertices = QVector<QRectF>(graph.vertices.size());
  QHash<int, int> vertexByGvid;
  int placed = 0;
  const QJsonArray objects = root.value(QStringLiteral("objects")).toArray();
  for (const QJsonValue& value : objects) {
    const QJsonObject object = value.toObject();
    const QString name = object.value(QStringLiteral("name")).toString();
    if (name.startsWith(QStringLiteral("cluster_g"))) {
      result->groupBoxes.insert(name.mid(9).toInt(), parseBox(object.value(QStringLiteral("bb")).toString(), height));
      continue;
    }
    if (name.startsWith(QStringLiteral("cluster_"))) {
      result->clusterBoxes.insert(name.mid(8).toInt(), parseBox(object.value(QStringLiteral("bb")).toString(), height));
      continue;
    }
    auto it = vertexById.constFind(name);
    if (it == vertexById.constEnd()) continue;
    bool ok = false;
    const QPointF center = parsePoint(object.value(QStringLiteral("pos")).toString(), height, &ok);
    if (!ok) continue;
    const double w = object.value(QStringLiteral("width")).toString().toDouble() * 72.0;
    const double h = object.value(QStringLiteral("height")).toString().toDouble() * 72.0;
    result->vertices[it.value()] = QRectF(center.x() - w / 2, center.y() - h / 2, w, h);
    vertexByGvid.insert(object.value(QStringLiteral("_gvid")).toInt(), it.value());
    ++placed;
  }
  if (placed != graph.vertices.size()) {
    *error = QStringLiteral("dot placed %1 of %2 nodes").arg(placed).arg(graph.vertices.size());
    return false;
  }

  QHash<quint64, int> edgeByEnds;
  for (int i = 0; i < graph.edges.size(); ++i) {
    edgeByEnds.insert((static_cast<quint64>(graph.edges[i].from) << 32) | static_cast<quint32>(graph.edges[i].to), i);
  }
  result->edgeSplines = QVector<QVector<QPointF>>(graph.edges.size());
  result->edgeArrowTips = QVector<QPointF>(graph.edges.size());
  const QJsonArray edges = root.value(QStringLiteral("edges")).toArray();
  for (const QJsonValue& value : edges) {
    const QJsonObject object = value.toObject();
    const int from = vertexByGvid.value(object.value(QStringLiteral("tail")).toInt(), -1);
    const int to = vertexByGvid.value(object.value(QStringLiteral("head")).toInt(), -1);
    auto it = edgeByEnds.constFind((static_cast<quint64>(from) << 32) | static_cast<quint32>(to));
    if (from < 0 || to < 0 || it == edgeByEnds.constEnd()) continue;
    QVector<QPointF> points;
    QPointF tip;
    const QString pos = object.value(QStringLiteral("pos")).toString();
    for (QStringView token : QStringView(pos).split(u' ', Qt::SkipEmptyParts)) {
      bool ok = false;
      if (token.startsWith(u"e,")) {
        tip = parsePoint(token.mid(2), height, &ok);
      } else if (token.startsWith(u"s,")) {
        continue;  // a start arrowhead: none are drawn
      } else {
        const QPointF p = parsePoint(token, height, &ok);
        if (ok) points << p;
      }
    }
    result->edgeSplines[it.value()] = points;
    result->edgeArrowTips[it.value()] = tip;
  }
  return true;
}

void GraphLayout::start(const VisibleGraph& graph, const GraphDocument& document) {
  cancel();
  const quint64 generation = ++generation_;
  timer_.start();
  if (graph.vertices.size() > kMaxDotVertices) {
    running_ = true;
    emit progress(tr("Laying out %n node(s)", nullptr, static_cast<int>(graph.vertices.size())));
    QStringList captions, groupCaptions;
    for (const GraphCluster& cluster : document.clusters()) captions << cluster.caption();
    for (const GraphGroup& group : document.groups()) groupCaptions << group.caption();
    parsePool_.start([this, generation, graph, captions, groupCaptions] {
      if (generation != generation_) return;
      auto result = std::make_shared<GraphLayoutResult>(layeredLayout(graph, captions, groupCaptions));
      result->layered = true;
      QMetaObject::invokeMethod(
          this,
          [this, generation, result] {
            if (generation != generation_) return;
            running_ = false;
            result->totalMs = static_cast<double>(timer_.nsecsElapsed()) / 1e6;
            emit finished(*result);
          },
          Qt::QueuedConnection);
    });
    return;
  }
  const QString program = dotProgram();
  if (program.isEmpty()) {
    // Reported asynchronously like every other outcome, so callers never see a signal from inside start().
    QMetaObject::invokeMethod(
        this,
        [this, generation] {
          if (generation != generation_) return;
          emit failed(tr("Graphviz 'dot' was not found (install the graphviz package, or set KILN_DOT)"));
        },
        Qt::QueuedConnection);
    return;
  }
  running_ = true;
  auto* process = new QProcess(this);
  process_ = process;
  connect(process, &QProcess::errorOccurred, this, [this, process, generation](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || generation != generation_) return;
    running_ = false;
    process_ = nullptr;
    process->deleteLater();
    emit failed(tr("Could not start %1: %2").arg(process->program(), process->errorString()));
  });
  connect(process, &QProcess::finished, this,
          [this, generation, process, graph](int, QProcess::ExitStatus) { onDotFinished(generation, process, graph); });
  emit progress(tr("Laying out %n node(s) with dot", nullptr, static_cast<int>(graph.vertices.size())));
  process->start(program, {QStringLiteral("-Tjson0")});
  process->write(toDot(graph, document));
  process->closeWriteChannel();
}

void GraphLayout::onDotFinished(quint64 generation, QProcess* process, const VisibleGraph& graph) {
  process->deleteLater();
  if (generation != generation_) return;  // cancelled: the kill ends up here
  process_ = nullptr;
  const double dotMs = static_cast<double>(timer_.nsecsElapsed()) / 1e6;
  if (process->exitStatus() != QProcess::NormalExit || process->exitCode() != 0) {
    running_ = false;
    const QString stderrText = QString::fromLocal8Bit(process->readAllStandardError()).trimmed();
    emit failed(tr("dot failed (exit code %1): %2").arg(process->exitCode()).arg(stderrText));
    return;
  }
  emit progress(tr("Reading the layout"));
  // Parsing a 3000-node layout takes tens of milliseconds: off the UI thread like the rest.
  parsePool_.start([this, generation, graph, json = process->readAllStandardOutput(), dotMs] {
    auto result = std::make_shared<GraphLayoutResult>();
    QString error;
    const bool ok = parseJson(json, graph, result.get(), &error);
    result->dotMs = dotMs;
    QMetaObject::invokeMethod(
        this,
        [this, generation, ok, result, error] {
          if (generation != generation_) return;
          running_ = false;
          if (!ok) {
            emit failed(error);
            return;
          }
          result->totalMs = static_cast<double>(timer_.nsecsElapsed()) / 1e6;
          emit finished(*result);
        },
        Qt::QueuedConnection);
  });
}

void GraphLayout::cancel() {
  ++generation_;
  running_ = false;
  if (process_) {
    QProcess* process = process_;
    process_ = nullptr;
    // The finished() that the kill produces sees a stale generation and only deletes the process.
    process->kill();
  }
}

}  // namespace kiln::bridge
