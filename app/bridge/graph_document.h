// GraphDocument: what the graph view draws, built from the engine's own structures: one graph of the model (the
// top-level graph or an If/Loop/Scan body, from kiln::inspectModel), where each node runs (kiln::analyzePartitions,
// graph by graph) and, for EPContext models, what each EPContext node holds (kiln::inspectEpContextModel). The
// main graph's document holds one document per body, so bodies open as their own graphs. Constant nodes are folded
// into their consumers (GraphNode::folded), as initializers are. Qt-Core only, so it is tested and built headless; the view
// turns it into items and the layout turns its visible part into DOT.
#pragma once

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/epcontext.h"
#include "kiln/model_info.h"
#include "kiln/partition_report.h"
#include "graph_groups.h"
#include "kiln/status.h"

namespace kiln::bridge {

// The one place EP colors are defined (0xRRGGBB; the bridge has no QColor). The view, its legend and the tests
// all read them from here.
namespace ep_colors {
constexpr uint32_t kVulkan = 0xd9822b;    // orange: VulkanExecutionProvider
constexpr uint32_t kCpu = 0x4a90d9;       // blue: CPUExecutionProvider
constexpr uint32_t kOther = 0x8e6cc2;     // violet: any other (foreign EPContext sources)
constexpr uint32_t kNone = 0xb0b0b0;      // grey: no EP (removed by the optimizer, or no report)
constexpr uint32_t kGraphIo = 0xe8e8e8;   // graph inputs and outputs
}  // namespace ep_colors

// The color of an EP by its full name ("VulkanExecutionProvider"); kNone for "".
uint32_t epColor(const QString& executionProvider);
// Short display name: "Vulkan", "CPU"; the name itself otherwise; "none" for "".
QString epShortName(const QString& executionProvider);

// The decoded attributes of one EPContext node (never its payload bytes).
struct EpContextDetails {
  QString source;
  int64_t embedMode = 0, mainContext = 1, maxSize = 0;
  QString cacheContext;  // relative path (embed mode 0) or "(embedded, N bytes)"
  QString partitionName, sdkVersion, hardwareArchitecture, onnxModelFilename, notes;
  QString binaryPath;    // the resolved binary file, "" when embedded or unresolved
  QString binaryKey;     // the key into the inspection's binaries ("embedded in '<node>'" for embedded ones)
  uint64_t binarySize = 0;  // bytes of the context binary (file size, or the embedded payload's size)
  int binaryGraphNodes = -1;  // nodes of this partition's graph in the binary, -1 when unknown
  QString problem;       // why the binary cannot be followed ("" when fine)
};

struct GraphNode {
  enum class Kind { Op, GraphInput, GraphOutput };
  Kind kind = Kind::Op;
  int modelIndex = -1;  // index into the graph's NodeInfo list (GraphDocument::nodeInfo) for Op nodes
  QString name;         // node name ("" for unnamed nodes) or value name for graph inputs/outputs
  QString opType, domain;
  QString label;        // "'conv1' (Conv)" as the partition report spells it; the value name for graph I/O
  QString executionProvider;  // "" when no EP runs it
  QString partition;          // "vulkan_0", "cpu_0", "" when none
  QStringList fallbackReasons;  // "<EP>: <reason>" for EPs preferred over the one that took it
  bool removedByOptimizer = false;  // absent from the partition report (folded, fused or dead)
  QString optimizerNote;            // "folded into initializer 'scale'", "removed or fused by the optimizer"
  bool epContext = false;
  std::optional<EpContextDetails> epContextDetails;
  bool outerScope = false;  // a GraphInput that is a value of an enclosing graph, read by this body
  bool folded = false;      // a Constant node drawn inside its consumer, not as a box of its own
  int foldedInto = -1;      // folded nodes: the first node reading the constant
  QStringList constantInputs;  // initializers and folded Constant outputs this node reads, in input order
  QStringList bodies;          // paths of the node's subgraph bodies ("main/If_25.else_branch")
  // A call of a model-local function: "custom:ScaleShift, inlined at load: its 4 nodes run as 'block/...'"; the
  // call itself never runs (its EP is the one its inlined nodes share). "" for other nodes.
  QString functionNote;

  // The name to show: the node name, or "(OpType)" for unnamed nodes.
  QString displayName() const;
  // True for If, Loop and Scan: control flow runs on the CPU by design (its bodies are partitioned on their own).
  bool isControlFlow() const;
  // True when an EP preferred over the one that took the node rejected it; never for control flow.
  bool cpuFallback() const { return !fallbackReasons.isEmpty() && !isControlFlow(); }
};

struct GraphEdge {
  int from = -1, to = -1;  // indices into GraphDocument::nodes
  QString value;
};

struct GraphCluster {
  QString name;  // partition name: "vulkan_0"
  QString executionProvider;
  bool compiled = false;
  QVector<int> nodes;  // indices into GraphDocument::nodes

  // "vulkan_0 · Vulkan": the partition's title as the view draws it.
  QString title() const;
  // "12 nodes" (or "1 node").
  QString nodeCountText() const;
  // The caption of an expanded partition: "vulkan_0 · Vulkan (12 nodes)". The layout reserves room for all of it.
  QString caption() const { return QStringLiteral("%1 (%2)").arg(title(), nodeCountText()); }
};

// The part of a document the layout lays out: collapsed clusters and groups become one vertex each.
struct VisibleGraph {
  struct Vertex {
    QString id;        // DOT id: "n12" for node 12, "c3" for collapsed cluster 3, "g5" for collapsed group 5
    int node = -1;     // document node, or -1
    int cluster = -1;  // collapsed cluster, or -1
    int group = -1;    // collapsed group, or -1
    int inCluster = -1;  // the expanded cluster it is drawn inside, or -1
    int inGroup = -1;    // the expanded group it is drawn inside (itself inside inCluster), or -1
    double widthIn = 1, heightIn = 0.4;  // inches, as DOT wants them
  };
  struct Edge {
    int from = -1, to = -1;  // vertex indices
    int count = 1;           // document edges folded into this one
    int firstEdge = -1;      // the first of them (an index into GraphDocument::edges)
  };
  QVector<Vertex> vertices;
  QVector<Edge> edges;
  QVector<int> expandedClusters;  // drawn as DOT clusters around their vertices
  QVector<int> expandedGroups;    // likewise, nested in their cluster's
};

// Whether `info` has EPContext nodes in its main graph or in any body (a compile can leave them in If bodies only):
// a compiled model, which the inspector decodes and the Compile API refuses as input.
bool hasEpContextNodes(const ModelInfo& info);

// One step of a breadcrumb: its text and the graph it opens ("branch" opens the graph holding node 'branch').
struct GraphCrumb {
  QString text;
  QString graphPath;
  QString selectNode;  // the node to select there ("" for none)
};

// A search match anywhere in the model: the graph and the node's index in that graph's document.
struct GraphHit {
  QString graphPath;
  int node = -1;
};

class GraphDocument {
 public:
  static constexpr const char* kMainPath = "main";

  // Builds the main graph's document and one per body. `report` is the analyzePartitions result: on failure every
  // node is drawn with no EP and `partitionError` holds the engine's message. `epContext` is given for models with
  // EPContext nodes.
  static GraphDocument build(const ModelInfo& info, const Result<PartitionReport>& report,
                             const std::optional<Result<EpContextModelInfo>>& epContext);

  const ModelInfo& modelInfo() const { return *info_; }
  // Main document only: what the model file is (kiln::identifyModel: its content hash, and a ctx model's source),
  // for binding per-node data to it; empty when the file could not be read again.
  const ModelIdentity& modelIdentity() const { return identity_; }
  void setModelIdentity(ModelIdentity identity) { identity_ = std::move(identity); }
  // "main", or the body's path ("main/If_25.else_branch").
  const QString& graphPath() const { return graphPath_; }
  // The engine's description of op node `node` (GraphNode::modelIndex into this graph's node list).
  const NodeInfo& nodeInfo(int node) const;
  // The constant (initializer or Constant output) named `value`, or nullptr.
  const ConstantInfo* constant(const QString& value) const;
  // Main document only: the document of body `path`, or nullptr; every body path, depth-first.
  std::shared_ptr<const GraphDocument> body(const QString& path) const { return bodies_.value(path); }
  const QStringList& bodyPaths() const { return bodyPaths_; }
  // The breadcrumb of graph `path`: main > branch > else_branch > ...
  static QVector<GraphCrumb> breadcrumb(const ModelInfo& info, const QString& path);
  // Main document only: matches of `text` in every graph (main first, then the bodies depth-first).
  QVector<GraphHit> searchAll(const QString& text) const;
  // Op nodes over every graph (main document: all bodies included).
  int opNodeCountAll() const;
  // The tensor edge `edge` carries as "float32[1,3,640,640]" (formatValueType); "" when the model gives it no type.
  QString edgeTensorText(int edge) const;
  // The visible node standing for `node`: itself, or for a folded Constant its consumer.
  int drawnNode(int node) const;
  const QVector<GraphNode>& nodes() const { return nodes_; }
  const QVector<GraphEdge>& edges() const { return edges_; }
  const QVector<GraphCluster>& clusters() const { return clusters_; }
  const QStringList& executionProviders() const { return executionProviders_; }  // in the report's order
  const QString& partitionError() const { return partitionError_; }
  const QString& epContextError() const { return epContextError_; }
  int opNodeCount() const { return opNodeCount_; }
  int foldedCount() const { return foldedCount_; }
  // The cluster node `node` belongs to, or -1.
  int clusterOf(int node) const { return node >= 0 && node < clusterOfNode_.size() ? clusterOfNode_[node] : -1; }
  // The groups big graphs are drawn as (graph_groups.h); empty for small graphs.
  const QVector<GraphGroup>& groups() const { return groups_; }
  // The group node `node` belongs to, or -1.
  int groupOf(int node) const { return node >= 0 && node < groupOfNode_.size() ? groupOfNode_[node] : -1; }
  int findCluster(const QString& name) const;
  // Document node indices whose name or op type contains `text` (case-insensitive), in topological order.
  QVector<int> search(const QString& text) const;

  // Open groups get a frame while there are at most this many (VisibleGraph::expandedGroups); beyond, none.
  static constexpr int kMaxGroupFrames = 6;
  // The graph to lay out with the clusters in `collapsed` (cluster indices) and the groups in `collapsedGroups`
  // folded into one vertex each (a group inside a collapsed cluster goes with it).
  VisibleGraph visibleGraph(const QSet<int>& collapsed, const QSet<int>& collapsedGroups = {}) const;

 private:
  // The vertex standing for collapsed group `group`, drawn inside expanded cluster `cluster` (or -1).
  VisibleGraph::Vertex groupVertex(int group, int cluster) const;
  static GraphDocument buildGraph(std::shared_ptr<const ModelInfo> info, const QString& path,
                                  const Result<PartitionReport>& report,
                                  const std::optional<Result<EpContextModelInfo>>& epContext);

  std::shared_ptr<const ModelInfo> info_;
  ModelIdentity identity_;
  QString graphPath_;
  const std::vector<NodeInfo>* sourceNodes_ = nullptr;  // inside *info_
  QHash<QString, std::shared_ptr<const GraphDocument>> bodies_;
  QStringList bodyPaths_;
  QVector<GraphNode> nodes_;
  QVector<GraphEdge> edges_;
  QVector<GraphCluster> clusters_;
  QVector<int> clusterOfNode_;
  QVector<GraphGroup> groups_;
  QVector<int> groupOfNode_;
  QStringList executionProviders_;
  QString partitionError_, epContextError_;
  int opNodeCount_ = 0;
  int foldedCount_ = 0;
};

}  // namespace kiln::bridge
