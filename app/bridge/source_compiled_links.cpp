#include "source_compiled_links.h"

#include "kiln/provider_names.h"
#include "kiln/tensor.h"
#include "value_format.h"

namespace kiln::bridge {

namespace {

// The partition an EPContext node ran as: its partition_name, "" for other nodes.
QString epContextPartition(const GraphDocument& compiled, int node) {
  if (node < 0 || node >= compiled.nodes().size()) return {};
  const GraphNode& n = compiled.nodes()[node];
  if (!n.epContext || !n.epContextDetails) return {};
  return n.epContextDetails->partitionName;
}

// True for nodes whose values live in host memory: graph inputs and outputs, and nodes not run by a device EP.
bool onHost(const GraphNode& node) {
  if (node.kind != GraphNode::Kind::Op) return true;
  return !node.epContext && (node.executionProvider.isEmpty() ||
                             node.executionProvider == QLatin1String(kCpuExecutionProvider));
}

bool onDevice(const GraphNode& node) {
  return node.kind == GraphNode::Kind::Op && node.epContext &&
         node.executionProvider != QLatin1String(kCpuExecutionProvider);
}

}  // namespace

QVector<int> replacedSourceNodes(const GraphDocument& source, const GraphDocument& compiled, int compiledNode) {
  const QString partition = epContextPartition(compiled, compiledNode);
  if (partition.isEmpty()) return {};
  const int cluster = source.findCluster(partition);
  if (cluster < 0) return {};
  return source.clusters()[cluster].nodes;
}

int replacingEpContextNode(const GraphDocument& source, int sourceNode, const GraphDocument& compiled) {
  const int cluster = source.clusterOf(sourceNode);
  if (cluster < 0 || !source.clusters()[cluster].compiled) return -1;
  const QString& partition = source.clusters()[cluster].name;
  for (int i = 0; i < compiled.nodes().size(); ++i) {
    if (epContextPartition(compiled, i) == partition) return i;
  }
  return -1;
}

namespace {

// The main document and its bodies, main first.
QVector<const GraphDocument*> everyGraph(const GraphDocument& root) {
  QVector<const GraphDocument*> graphs{&root};
  for (const QString& path : root.bodyPaths()) {
    if (auto body = root.body(path)) graphs.push_back(body.get());
  }
  return graphs;
}

}  // namespace

GraphNodes findReplacedSourceNodes(const GraphDocument& sourceRoot, const GraphDocument& compiled, int compiledNode) {
  for (const GraphDocument* graph : everyGraph(sourceRoot)) {
    QVector<int> nodes = replacedSourceNodes(*graph, compiled, compiledNode);
    if (!nodes.isEmpty()) return {graph->graphPath(), nodes};
  }
  return {};
}

GraphNodes findReplacingEpContextNode(const GraphDocument& source, int sourceNode, const GraphDocument& compiledRoot) {
  for (const GraphDocument* graph : everyGraph(compiledRoot)) {
    const int node = replacingEpContextNode(source, sourceNode, *graph);
    if (node >= 0) return {graph->graphPath(), {node}};
  }
  return {};
}

QString BorderTransfer::label() const {
  const QString direction = toDevice ? QStringLiteral("H→D") : QStringLiteral("D→H");
  return QStringLiteral("%1 %2").arg(direction, bytes >= 0 ? formatByteSize(bytes) : QStringLiteral("(size unknown)"));
}

int64_t valueBytes(const ModelInfo& info, const QString& name) {
  const auto found = info.values.find(name.toStdString());
  if (found == info.values.end() || !found->second.hasShape) return -1;
  const ValueMetadata& value = found->second;
  if (value.dtype == DataType::UNDEFINED || value.kind != ValueKind::TENSOR) return -1;
  const int64_t element = static_cast<int64_t>(dataTypeSize(value.dtype));
  if (element <= 0) return -1;
  int64_t count = 1;
  for (const Dimension& d : value.shape) {
    if (!d.isFixed()) return -1;
    count *= d.value;
  }
  return count * element;
}

QVector<BorderTransfer> borderTransfers(const GraphDocument& document) {
  QVector<BorderTransfer> transfers;
  for (const GraphEdge& e : document.edges()) {
    if (e.from < 0 || e.to < 0) continue;
    const GraphNode& from = document.nodes()[e.from];
    const GraphNode& to = document.nodes()[e.to];
    const bool toDevice = onHost(from) && onDevice(to);
    const bool toHost = onDevice(from) && onHost(to);
    if (!toDevice && !toHost) continue;
    transfers.push_back({e.from, e.to, e.value, toDevice, valueBytes(document.modelInfo(), e.value)});
  }
  return transfers;
}

}  // namespace kiln::bridge
