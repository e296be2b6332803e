#include "graph_document.h"

#include <QMap>

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include "session_flags.h"
#include "value_format.h"

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

QString GraphCluster::title() const { return QStringLiteral("%1 \u00b7 %2").arg(name, epShortName(executionProvider)); }

QString GraphCluster::nodeCountText() const {
  return nodes.size() == 1 ? QStringLiteral("1 node") : QStringLiteral("%1 nodes").arg(nodes.size());
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

namespace {

// The subgraph description of `path`, or nullptr (for "main").
const SubgraphInfo* findSubgraph(const ModelInfo& info, const std::string& path) {
  for (const auto& sub : info.subgraphs) {
    if (sub.path == path) return &sub;
  }
  return nullptr;
}

// A call of a local function never runs: its inlined nodes ("'<prefix><call>/...' (Op)") do. The call takes the
// EP they share and a note saying so; a call whose nodes are split over several EPs names them all. Returns the
// label prefix of its inlined nodes.
std::string describeInlinedCall(const GraphPartitionReport& report, const std::string& prefix, const NodeInfo& call,
                         GraphNode& n) {
  const std::string callName = call.name.empty() ? call.opType + "_" + std::to_string(n.modelIndex) : call.name;
  const std::string inlined = "'" + prefix + callName + "/";
  QStringList eps;
  int count = 0;
  for (const auto& placement : report.nodes) {
    if (placement.node.rfind(inlined, 0) != 0) continue;
    ++count;
    if (!eps.contains(qs(placement.executionProvider))) eps << qs(placement.executionProvider);
  }
  if (eps.size() == 1) n.executionProvider = eps.first();
  QStringList shortNames;
  for (const QString& ep : eps) shortNames << epShortName(ep);
  n.functionNote = QStringLiteral("model-local function %1, inlined at load: its %2 nodes run as '%3/...'%4")
                       .arg(qs(call.localFunction))
                       .arg(count)
                       .arg(qs(prefix + callName))
                       .arg(shortNames.isEmpty() ? QString() : QStringLiteral(" on ") + shortNames.join(QStringLiteral(", ")));
  return inlined;
}

bool isFoldableConstant(const NodeInfo& node) {
  const bool onnxDomain = node.domain.empty() || node.domain == "ai.onnx";
  // A function body's Constant whose value refers to the call's attribute ("@alpha = 0.5") stays a box: its
  // value is only in its details.
  for (const auto& [_, value] : node.attributes) {
    if (value.rfind('@', 0) == 0) return false;
  }
  return onnxDomain && node.opType == "Constant" && node.inputs.empty() && node.outputs.size() == 1;
}

}  // namespace

bool hasEpContextNodes(const ModelInfo& info) {
  const auto isEpContext = [](const NodeInfo& n) { return kiln::isEpContextNode(n.opType, n.domain); };
  if (std::any_of(info.nodes.begin(), info.nodes.end(), isEpContext)) return true;
  return std::any_of(info.subgraphs.begin(), info.subgraphs.end(), [&](const SubgraphInfo& body) {
    return std::any_of(body.nodes.begin(), body.nodes.end(), isEpContext);
  });
}

GraphDocument GraphDocument::build(const ModelInfo& info, const Result<PartitionReport>& report,
                                   const std::optional<Result<EpContextModelInfo>>& epContext) {
  auto shared = std::make_shared<const ModelInfo>(info);
  GraphDocument doc = buildGraph(shared, QString::fromLatin1(kMainPath), report, epContext);
  for (const auto& sub : shared->subgraphs) {
    const QString path = qs(sub.path);
    doc.bodyPaths_ << path;
    doc.bodies_.insert(path, std::make_shared<const GraphDocument>(buildGraph(shared, path, report, epContext)));
  }
  return doc;
}

GraphDocument GraphDocument::buildGraph(std::shared_ptr<const ModelInfo> shared, const QString& path,
                                        const Result<PartitionReport>& report,
                                        const std::optional<Result<EpContextModelInfo>>& epContext) {
  GraphDocument doc;
  doc.info_ = std::move(shared);
  doc.graphPath_ = path;
  const ModelInfo& info = *doc.info_;
  const std::string graphPath = path.toStdString();
  const SubgraphInfo* sub = findSubgraph(info, graphPath);
  doc.sourceNodes_ = sub ? &sub->nodes : &info.nodes;
  const std::vector<NodeInfo>& sourceNodes = *doc.sourceNodes_;
  const std::vector<ValueMetadata>& inputs = sub ? sub->inputs : info.inputs;
  const std::vector<ValueMetadata>& outputs = sub ? sub->outputs : info.outputs;

  // Graph inputs first (a body's outer-scope values after its formal inputs), then the nodes in topological
  // order, then the graph outputs: DOT ranks follow edges, the order only breaks ties.
  QHash<QString, int> producer;  // value -> node producing it
  auto addInput = [&](const std::string& name, bool outer) {
    GraphNode n;
    n.kind = GraphNode::Kind::GraphInput;
    n.name = n.label = qs(name);
    n.opType = outer ? QStringLiteral("outer scope") : QStringLiteral("input");
    n.outerScope = outer;
    producer.insert(n.name, static_cast<int>(doc.nodes_.size()));
    doc.nodes_.push_back(std::move(n));
  };
  for (const auto& input : inputs) addInput(input.name, false);
  if (sub) {
    for (const auto& name : sub->outerScopeInputs) {
      if (!info.constants.count(name)) addInput(name, true);  // outer initializers fold like local ones
    }
  }
  QSet<QString> graphOutputs;
  for (const auto& output : outputs) graphOutputs.insert(qs(output.name));
  QHash<QString, int> foldedProducer;  // Constant output -> folded node
  for (size_t i = 0; i < sourceNodes.size(); ++i) {
    const NodeInfo& src = sourceNodes[i];
    GraphNode n;
    n.modelIndex = static_cast<int>(i);
    n.name = qs(src.name);
    n.opType = qs(src.opType);
    n.domain = qs(src.domain);
    n.label = qs(reportLabel(src));
    n.epContext = isEpContextNode(src);
    if (!src.localFunction.empty()) {
      n.functionNote = QStringLiteral("model-local function %1, inlined at load").arg(qs(src.localFunction));
    }
    const int index = static_cast<int>(doc.nodes_.size());
    n.folded = isFoldableConstant(src) && !graphOutputs.contains(qs(src.outputs[0]));
    for (const auto& input : src.inputs) {
      if (input.empty()) continue;
      const QString value = qs(input);
      auto folded = foldedProducer.constFind(value);
      if (folded != foldedProducer.constEnd()) {
        n.constantInputs << value;
        if (doc.nodes_[folded.value()].foldedInto < 0) doc.nodes_[folded.value()].foldedInto = index;
        continue;
      }
      auto it = producer.constFind(value);
      if (it != producer.constEnd()) {
        doc.edges_.push_back({it.value(), index, value});
      } else if (info.constants.count(input)) {
        n.constantInputs << value;
      }
    }
    // What the node's bodies read from here: drawn as edges into the node, so such values are never unconnected.
    for (const auto& input : src.implicitInputs) {
      auto it = producer.constFind(qs(input));
      if (it != producer.constEnd()) doc.edges_.push_back({it.value(), index, qs(input)});
    }
    for (const auto& output : src.outputs) {
      if (output.empty()) continue;
      if (n.folded) {
        foldedProducer.insert(qs(output), index);
      } else {
        producer.insert(qs(output), index);
      }
    }
    for (const auto& body : info.subgraphs) {
      if (body.parentPath == graphPath && body.ownerIndex == static_cast<int64_t>(i)) n.bodies << qs(body.path);
    }
    if (n.folded) ++doc.foldedCount_;
    doc.nodes_.push_back(std::move(n));
    ++doc.opNodeCount_;
  }
  for (const auto& output : outputs) {
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

  // A function body's nodes run inlined into the nearest enclosing graph that is not a function body, named
  // "<call>/<node>" (the engine's onnx/function_inliner.h): their placements are read there under that name.
  std::string reportPath = graphPath, inlinedPrefix;
  for (const SubgraphInfo* s = sub; s && !s->function.empty(); s = findSubgraph(info, s->parentPath)) {
    inlinedPrefix = s->ownerNode + "/" + inlinedPrefix;
    reportPath = s->parentPath;
  }
  auto placementLabel = [&](const GraphNode& n) {
    if (inlinedPrefix.empty()) return n.label.toStdString();
    const NodeInfo& src = sourceNodes[static_cast<size_t>(n.modelIndex)];
    const std::string name = src.name.empty() ? src.opType + "_" + std::to_string(n.modelIndex) : src.name;
    return "'" + inlinedPrefix + name + "' (" + src.opType + ")";
  };

  // Where each node runs. Labels repeat for unnamed nodes of one op type: they are matched in order, as the
  // report lists nodes in the same topological order.
  if (report.isOk()) {
    for (const auto& ep : report.value().executionProviders) doc.executionProviders_ << qs(ep);
    const GraphPartitionReport* graphReport = nullptr;
    for (const auto& graph : report.value().graphs) {
      if (graph.path == reportPath) graphReport = &graph;
    }
    if (graphReport) {
      std::map<std::string, std::deque<const NodePlacement*>> placements;
      for (const auto& placement : graphReport->nodes) placements[placement.node].push_back(&placement);
      std::map<std::string, std::deque<int>> partitionOf;
      for (size_t p = 0; p < graphReport->partitions.size(); ++p) {
        const ReportedPartition& partition = graphReport->partitions[p];
        GraphCluster cluster;
        cluster.name = qs(partition.name);
        cluster.executionProvider = qs(partition.executionProvider);
        cluster.compiled = partition.compiled;
        doc.clusters_.push_back(std::move(cluster));
        for (const auto& label : partition.nodes) partitionOf[label].push_back(static_cast<int>(p));
      }
      std::map<std::string, std::string> folded;  // label -> initializer
      for (const auto& constant : graphReport->foldedConstants) folded[constant.node] = constant.output;
      for (int i = 0; i < doc.nodes_.size(); ++i) {
        GraphNode& n = doc.nodes_[i];
        if (n.kind != GraphNode::Kind::Op) continue;
        const std::string label = placementLabel(n);
        const NodeInfo& src = sourceNodes[static_cast<size_t>(n.modelIndex)];
        if (!src.localFunction.empty()) {
          // Drawn inside the partition that runs all of its inlined nodes, so the layout keeps it with them.
          const std::string inlined = describeInlinedCall(*graphReport, inlinedPrefix, src, n);
          int only = -1;
          for (size_t p = 0; p < graphReport->partitions.size() && only != -2; ++p) {
            for (const auto& member : graphReport->partitions[p].nodes) {
              if (member.rfind(inlined, 0) != 0) continue;
              only = only == -1 || only == static_cast<int>(p) ? static_cast<int>(p) : -2;
            }
          }
          if (only >= 0) {
            n.partition = doc.clusters_[only].name;
            doc.clusters_[only].nodes.push_back(i);
            doc.clusterOfNode_[i] = only;
          }
          continue;
        }
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
          if (!n.folded) doc.clusters_[p].nodes.push_back(i);
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
        if (node.graph == graphPath) byName[node.name] = &node;
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
  auto tensorText = [&doc](int edge) { return doc.edgeTensorText(edge); };
  doc.groups_ = findGroups(doc.nodes_, doc.edges_, doc.clusterOfNode_, tensorText);
  doc.groupOfNode_.fill(-1, doc.nodes_.size());
  for (int g = 0; g < doc.groups_.size(); ++g) {
    for (int node : doc.groups_[g].nodes) doc.groupOfNode_[node] = g;
  }
  return doc;
}

const NodeInfo& GraphDocument::nodeInfo(int node) const {
  return (*sourceNodes_)[static_cast<size_t>(nodes_[node].modelIndex)];
}

const ConstantInfo* GraphDocument::constant(const QString& value) const {
  auto it = info_->constants.find(value.toStdString());
  return it == info_->constants.end() ? nullptr : &it->second;
}

QVector<GraphCrumb> GraphDocument::breadcrumb(const ModelInfo& info, const QString& path) {
  QVector<GraphCrumb> crumbs;
  const SubgraphInfo* sub = findSubgraph(info, path.toStdString());
  while (sub) {
    crumbs.prepend({qs(sub->attribute), qs(sub->path), {}});
    crumbs.prepend({qs(sub->ownerNode), qs(sub->parentPath), qs(sub->ownerNode)});
    sub = findSubgraph(info, sub->parentPath);
  }
  crumbs.prepend({QString::fromLatin1(kMainPath), QString::fromLatin1(kMainPath), {}});
  return crumbs;
}

QVector<GraphHit> GraphDocument::searchAll(const QString& text) const {
  QVector<GraphHit> hits;
  for (int node : search(text)) hits.push_back({graphPath_, node});
  for (const QString& path : bodyPaths_) {
    const auto& doc = bodies_.value(path);
    for (int node : doc->search(text)) hits.push_back({path, node});
  }
  return hits;
}

int GraphDocument::opNodeCountAll() const {
  int count = opNodeCount_;
  for (const auto& doc : bodies_) count += doc->opNodeCount();
  return count;
}

QString GraphDocument::edgeTensorText(int edge) const {
  if (edge < 0 || edge >= edges_.size()) return {};
  const auto it = info_->values.find(edges_[edge].value.toStdString());
  if (it == info_->values.end() || it->second.dtype == DataType::UNDEFINED) return {};
  return formatValueType(it->second);
}

int GraphDocument::drawnNode(int node) const {
  if (node < 0 || node >= nodes_.size()) return -1;
  return nodes_[node].folded ? nodes_[node].foldedInto : node;
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

VisibleGraph::Vertex GraphDocument::groupVertex(int group, int cluster) const {
  VisibleGraph::Vertex v;
  v.id = QStringLiteral("g%1").arg(group);
  v.group = group;
  v.inCluster = cluster;
  // Wide enough for the title at the group font (up to 11 points a character) and its smaller subtitle.
  const qsizetype chars = std::max(groups_[group].title.size(), groups_[group].subtitle().size() * 3 / 4);
  v.widthIn = std::max(2.0, 0.45 + 0.155 * static_cast<double>(chars));
  v.heightIn = 0.7;
  return v;
}

VisibleGraph GraphDocument::visibleGraph(const QSet<int>& collapsed, const QSet<int>& collapsedGroups) const {
  VisibleGraph graph;
  QVector<int> vertexOfNode(nodes_.size(), -1);
  QVector<int> vertexOfCluster(clusters_.size(), -1);
  QVector<int> vertexOfGroup(groups_.size(), -1);
  for (int i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    if (n.folded) continue;  // drawn inside its consumer
    const int cluster = clusterOf(i);
    if (cluster >= 0 && collapsed.contains(cluster)) {
      if (vertexOfCluster[cluster] < 0) {
        VisibleGraph::Vertex v;
        v.id = QStringLiteral("c%1").arg(cluster);
        v.cluster = cluster;
        // Wide enough for the bold title ("vulkan_12 \u00b7 Vulkan"): a collapsed partition's label is never cut.
        v.widthIn = std::max(2.2, 0.5 + 0.11 * static_cast<double>(clusters_[cluster].title().size()));
        v.heightIn = 0.75;
        vertexOfCluster[cluster] = static_cast<int>(graph.vertices.size());
        graph.vertices.push_back(v);
      }
      vertexOfNode[i] = vertexOfCluster[cluster];
      continue;
    }
    const int group = groupOf(i);
    if (group >= 0 && collapsedGroups.contains(group)) {
      if (vertexOfGroup[group] < 0) {
        vertexOfGroup[group] = static_cast<int>(graph.vertices.size());
        graph.vertices.push_back(groupVertex(group, cluster));
      }
      vertexOfNode[i] = vertexOfGroup[group];
      continue;
    }
    VisibleGraph::Vertex v;
    v.id = QStringLiteral("n%1").arg(i);
    v.node = i;
    v.inCluster = cluster;
    v.inGroup = group;
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
  for (int g = 0; g < groups_.size(); ++g) {
    if (!collapsedGroups.contains(g) && !collapsed.contains(groups_[g].cluster)) graph.expandedGroups.push_back(g);
  }
  if (graph.expandedGroups.size() > kMaxGroupFrames) {
    // Many groups open at once (Expand all): their members are drawn without frames. Dozens of nested DOT
    // clusters take dot minutes (a 580-node U-Net: over two), and the frames would only repeat the partitions.
    graph.expandedGroups.clear();
    for (VisibleGraph::Vertex& v : graph.vertices) v.inGroup = -1;
  }
  QHash<quint64, int> edgeIndex;
  for (int index = 0; index < edges_.size(); ++index) {
    const GraphEdge& e = edges_[index];
    const int from = vertexOfNode[e.from], to = vertexOfNode[e.to];
    if (from < 0 || to < 0 || from == to) continue;  // an edge inside a collapsed cluster
    const quint64 key = (static_cast<quint64>(from) << 32) | static_cast<quint32>(to);
    auto it = edgeIndex.constFind(key);
    if (it != edgeIndex.constEnd()) {
      ++graph.edges[it.value()].count;
      continue;
    }
    edgeIndex.insert(key, static_cast<int>(graph.edges.size()));
    graph.edges.push_back({from, to, 1, index});
  }
  return graph;
}

}  // namespace kiln::bridge
