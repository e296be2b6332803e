#include "graph_document.h"

#include <QMap>

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include "session_flags.h"

namespace kiln::bridge {

namespace {

const QString kVulkanEp = QString::fromLatin1(app::kVulkanProviderName);
const QString kCpuEp = QString::fromLatin1(app::kCpuProviderName);

QString qs(const std::string& text) { return QString::fromStdString(text); }

// The partition report's spelling of a node: "'conv1' (Conv)", or "(Conv)" for an unnamed node.
std::string reportLabel(const NodeInfo& node) {
  if (node.name.empty()) return "(" + node.opType + ")";
  return "'" + node.name + "' (" + node.opType + ")";
}

bool isEpContextNode(const NodeInfo& node) { return kiln::isEpContextNode(node.opType, node.domain); }

// Width in inches for a box showing `chars` characters at the view's node font (about 7 px a character at 72 dpi).
double boxWidth(qsizetype chars) { return std::clamp(0.35 + 0.095 * static_cast<double>(chars), 1.0, 2.8); }

EpContextDetails toDetails(const EpContextNodeInfo& node, const EpContextModelInfo& model) {
  EpContextDetails d;
  d.source = qs(node.source);
  d.embedMode = node.embedMode;
  d.mainContext = node.mainContext;
  d.maxSize = node.maxSize;
  d.cacheContext = qs(node.cacheContext);
  d.partitionName = qs(node.partitionName);
  d.sdkVersion = qs(node.sdkVersion);
  d.hardwareArchitecture = qs(node.hardwareArchitecture);
  d.onnxModelFilename = qs(node.onnxModelFilename);
  d.notes = qs(node.notes);
  d.problem = qs(node.problem);
  d.binaryKey = qs(node.binary);
  auto it = model.binaries.find(node.binary);
  if (!node.binary.empty() && it != model.binaries.end()) {
    d.binarySize = it->second.fileSize;
    // Embedded binaries are keyed "embedded in '<node>'"; only a file on disk can be opened by the inspector.
    if (node.embedMode == 0) d.binaryPath = qs(it->second.path.empty() ? node.binary : it->second.path);
    for (const auto& graph : it->second.graphs) {
      if (graph.name == node.partitionName) d.binaryGraphNodes = static_cast<int>(graph.nodes);
    }
  }
  return d;
}

}  // namespace

uint32_t epColor(const QString& executionProvider) {
  if (executionProvider.isEmpty()) return ep_colors::kNone;
  if (executionProvider == kVulkanEp) return ep_colors::kVulkan;
  if (executionProvider == kCpuEp) return ep_colors::kCpu;
  return ep_colors::kOther;
}

QString epShortName(const QString& executionProvider) {
  if (executionProvider.isEmpty()) return QStringLiteral("none");
  QString name = executionProvider;
  if (name.endsWith(QStringLiteral("ExecutionProvider"))) name.chop(17);
  return name;
}

QString GraphNode::displayName() const {
  if (!name.isEmpty()) return name;
  return QStringLiteral("(%1)").arg(opType);
}

bool GraphNode::isControlFlow() const {
  const bool onnxDomain = domain.isEmpty() || domain == QLatin1String("ai.onnx");
  return kind == Kind::Op && onnxDomain &&
         (opType == QLatin1String("If") || opType == QLatin1String("Loop") || opType == QLatin1String("Scan"));
}

GraphDocument GraphDocument::build(const ModelInfo& info, const Result<PartitionReport>& report,
                                   const std::optional<Result<EpContextModelInfo>>& epContext) {
  GraphDocument doc;
  doc.info_ = info;

  // Graph inputs first, then the nodes in topological order, then the graph outputs: DOT ranks follow edges, the
  // order only breaks ties.
  QHash<QString, int> producer;  // value -> node producing it
  for (const auto& input : info.inputs) {
    GraphNode n;
    n.kind = GraphNode::Kind::GraphInput;
    n.name = n.label = qs(input.name);
    n.opType = QStringLiteral("input");
    producer.insert(n.name, static_cast<int>(doc.nodes_.size()));
    doc.nodes_.push_back(std::move(n));
  }
  for (size_t i = 0; i < info.nodes.size(); ++i) {
    const NodeInfo& src = info.nodes[i];
    GraphNode n;
    n.modelIndex = static_cast<int>(i);
    n.name = qs(src.name);
    n.opType = qs(src.opType);
    n.domain = qs(src.domain);
    n.label = qs(reportLabel(src));
    n.epContext = isEpContextNode(src);
    const int index = static_cast<int>(doc.nodes_.size());
    for (const auto& input : src.inputs) {
      auto it = producer.constFind(qs(input));
      if (!input.empty() && it != producer.constEnd()) doc.edges_.push_back({it.value(), index, qs(input)});
    }
    for (const auto& output : src.outputs) {
      if (!output.empty()) producer.insert(qs(output), index);
    }
    doc.nodes_.push_back(std::move(n));
    ++doc.opNodeCount_;
  }
  for (const auto& output : info.outputs) {
    GraphNode n;
    n.kind = GraphNode::Kind::GraphOutput;
    n.name = n.label = qs(output.name);
    n.opType = QStringLiteral("output");
    const int index = static_cast<int>(doc.nodes_.size());
    auto it = producer.constFind(n.name);
    if (it != producer.constEnd()) doc.edges_.push_back({it.value(), index, n.name});
    doc.nodes_.push_back(std::move(n));
  }
  doc.clusterOfNode_.fill(-1, doc.nodes_.size());

  // Where each node runs. Labels repeat for unnamed nodes of one op type: they are matched in order, as the
  // report lists nodes in the same topological order.
  if (report.isOk()) {
    for (const auto& ep : report.value().executionProviders) doc.executionProviders_ << qs(ep);
    const GraphPartitionReport* main = nullptr;
    for (const auto& graph : report.value().graphs) {
      if (graph.path == "main") main = &graph;
    }
    if (main) {
      std::map<std::string, std::deque<const NodePlacement*>> placements;
      for (const auto& placement : main->nodes) placements[placement.node].push_back(&placement);
      std::map<std::string, std::deque<int>> partitionOf;
      for (size_t p = 0; p < main->partitions.size(); ++p) {
        const ReportedPartition& partition = main->partitions[p];
        GraphCluster cluster;
        cluster.name = qs(partition.name);
        cluster.executionProvider = qs(partition.executionProvider);
        cluster.compiled = partition.compiled;
        doc.clusters_.push_back(std::move(cluster));
        for (const auto& label : partition.nodes) partitionOf[label].push_back(static_cast<int>(p));
      }
      std::map<std::string, std::string> folded;  // label -> initializer
      for (const auto& constant : main->foldedConstants) folded[constant.node] = constant.output;
      for (int i = 0; i < doc.nodes_.size(); ++i) {
        GraphNode& n = doc.nodes_[i];
        if (n.kind != GraphNode::Kind::Op) continue;
        const std::string label = n.label.toStdString();
        auto placed = placements.find(label);
        if (placed == placements.end() || placed->second.empty()) {
          n.removedByOptimizer = true;
          auto f = folded.find(label);
          n.optimizerNote = f != folded.end()
                                ? QStringLiteral("folded into initializer '%1'").arg(qs(f->second))
                                : QStringLiteral("removed or fused by the optimizer");
          continue;
        }
        const NodePlacement* placement = placed->second.front();
        placed->second.pop_front();
        n.executionProvider = qs(placement->executionProvider);
        for (const auto& reason : placement->rejections) n.fallbackReasons << qs(reason);
        auto part = partitionOf.find(label);
        if (part != partitionOf.end() && !part->second.empty()) {
          const int p = part->second.front();
          part->second.pop_front();
          n.partition = doc.clusters_[p].name;
          doc.clusters_[p].nodes.push_back(i);
          doc.clusterOfNode_[i] = p;
        }
      }
    }
  } else {
    doc.partitionError_ = qs(report.status().toString());
  }

  if (epContext) {
    if (epContext->isOk()) {
      const EpContextModelInfo& ctx = epContext->value();
      std::map<std::string, const EpContextNodeInfo*> byName;
      for (const auto& node : ctx.nodes) {
        if (node.graph == "main") byName[node.name] = &node;
      }
      for (GraphNode& n : doc.nodes_) {
        if (!n.epContext) continue;
        auto it = byName.find(n.name.toStdString());
        if (it == byName.end()) continue;
        n.epContextDetails = toDetails(*it->second, ctx);
        // Without a partition report (no Vulkan device, say) the node still shows who would run it.
        if (n.executionProvider.isEmpty() && !n.removedByOptimizer) {
          n.executionProvider = it->second->vulkan ? kVulkanEp : n.epContextDetails->source;
        }
      }
    } else {
      doc.epContextError_ = qs(epContext->status().toString());
    }
  }
  return doc;
}

int GraphDocument::findCluster(const QString& name) const {
  for (int i = 0; i < clusters_.size(); ++i) {
    if (clusters_[i].name == name) return i;
  }
  return -1;
}

QVector<int> GraphDocument::search(const QString& text) const {
  QVector<int> found;
  const QString needle = text.trimmed();
  if (needle.isEmpty()) return found;
  for (int i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    if (n.name.contains(needle, Qt::CaseInsensitive) || n.opType.contains(needle, Qt::CaseInsensitive)) {
      found.push_back(i);
    }
  }
  return found;
}

VisibleGraph GraphDocument::visibleGraph(const QSet<int>& collapsed) const {
  VisibleGraph graph;
  QVector<int> vertexOfNode(nodes_.size(), -1);
  QVector<int> vertexOfCluster(clusters_.size(), -1);
  for (int i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    const int cluster = clusterOf(i);
    if (cluster >= 0 && collapsed.contains(cluster)) {
      if (vertexOfCluster[cluster] < 0) {
        VisibleGraph::Vertex v;
        v.id = QStringLiteral("c%1").arg(cluster);
        v.cluster = cluster;
        v.widthIn = 2.2;
        v.heightIn = 0.75;
        vertexOfCluster[cluster] = static_cast<int>(graph.vertices.size());
        graph.vertices.push_back(v);
      }
      vertexOfNode[i] = vertexOfCluster[cluster];
      continue;
    }
    VisibleGraph::Vertex v;
    v.id = QStringLiteral("n%1").arg(i);
    v.node = i;
    v.inCluster = cluster;
    if (n.kind == GraphNode::Kind::Op) {
      v.widthIn = boxWidth(std::max(n.displayName().size(), n.opType.size() + 2));
      v.heightIn = 0.5;
    } else {
      v.widthIn = boxWidth(n.name.size());
      v.heightIn = 0.35;
    }
    vertexOfNode[i] = static_cast<int>(graph.vertices.size());
    graph.vertices.push_back(v);
  }
  for (int c = 0; c < clusters_.size(); ++c) {
    if (!collapsed.contains(c) && !clusters_[c].nodes.isEmpty()) graph.expandedClusters.push_back(c);
  }
  QHash<quint64, int> edgeIndex;
  for (const GraphEdge& e : edges_) {
    const int from = vertexOfNode[e.from], to = vertexOfNode[e.to];
    if (from < 0 || to < 0 || from == to) continue;  // an edge inside a collapsed cluster
    const quint64 key = (static_cast<quint64>(from) << 32) | static_cast<quint32>(to);
    auto it = edgeIndex.constFind(key);
    if (it != edgeIndex.constEnd()) {
      ++graph.edges[it.value()].count;
      continue;
    }
    edgeIndex.insert(key, static_cast<int>(graph.edges.size()));
    graph.edges.push_back({from, to, 1});
  }
  return graph;
}

}  // namespace kiln::bridge
