#include "model_diff_rows.h"

#include <QCoreApplication>

#include <utility>

namespace kiln::bridge {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("kiln::bridge", text); }

const QString kArrow = QStringLiteral(" \u2192 ");

QString qs(const std::string& text) { return QString::fromStdString(text); }

QString hexHash(uint64_t hash) { return QStringLiteral("%1").arg(hash, 16, 16, QLatin1Char('0')); }

// "[x, W, B]", as `kiln diff` writes a node's connections.
QString joined(const std::vector<std::string>& items) {
  QStringList list;
  for (const std::string& item : items) list << qs(item);
  return QStringLiteral("[%1]").arg(list.join(QStringLiteral(", ")));
}

QStringList toList(const std::vector<std::string>& items) {
  QStringList list;
  for (const std::string& item : items) list << qs(item);
  return list;
}

// "Conv", or "com.microsoft:FusedConv" for another domain.
QString opText(const NodeSide& side) {
  return side.domain.empty() ? qs(side.opType) : qs(side.domain) + QLatin1Char(':') + qs(side.opType);
}

// "absent" stands in for a side that lacks the item in one-line summaries.
QString orAbsent(const QString& text) { return text.isEmpty() ? tr("(absent)") : text; }

DiffRow opsetRow(const OpsetDiff& d) {
  DiffRow row;
  row.category = DiffRow::Category::Opset;
  row.change = d.change;
  row.name = d.domain.empty() ? QStringLiteral("ai.onnx") : qs(d.domain);
  auto version = [](int64_t v) { return v == 0 ? QString() : QString::number(v); };
  row.details = {{tr("version"), version(d.versionA), version(d.versionB)}};
  row.summary = orAbsent(version(d.versionA)) + kArrow + orAbsent(version(d.versionB));
  return row;
}

DiffRow valueRow(const ValueDiff& d, bool input) {
  DiffRow row;
  row.category = input ? DiffRow::Category::Input : DiffRow::Category::Output;
  row.change = d.change;
  row.graph = qs(d.graph);
  row.name = qs(d.name);
  row.details = {{tr("type"), qs(d.typeA), qs(d.typeB)}};
  row.summary = d.change == DiffChange::CHANGED ? qs(d.typeA) + kArrow + qs(d.typeB)
                                                : qs(d.typeA.empty() ? d.typeB : d.typeA);
  const DiffLocator::Kind kind = input ? DiffLocator::Kind::GraphInput : DiffLocator::Kind::GraphOutput;
  if (d.change != DiffChange::ADDED) row.inA = {kind, row.graph, row.name, {}};
  if (d.change != DiffChange::REMOVED) row.inB = {kind, row.graph, row.name, {}};
  return row;
}

// The node on one side: by name, or by its outputs when it has no name.
DiffLocator nodeLocator(const NodeDiff& d, const NodeSide& side) {
  return {DiffLocator::Kind::OpNode, qs(d.graph), d.unnamed ? QString() : qs(d.name), toList(side.outputs)};
}

// Where a node the other side lacks would sit: after the nodes producing its inputs.
DiffLocator producersLocator(const NodeDiff& d, const NodeSide& side) {
  return {DiffLocator::Kind::Producers, qs(d.graph), {}, toList(side.inputs)};
}

DiffRow nodeRow(const NodeDiff& d) {
  DiffRow row;
  row.category = DiffRow::Category::Node;
  row.change = d.change;
  row.graph = qs(d.graph);
  row.name = qs(d.name);
  row.opType = opText(d.change == DiffChange::ADDED ? d.b : d.a);
  QStringList parts;
  if (d.change != DiffChange::CHANGED) {
    // One side only: what it is and what it connects.
    const NodeSide& side = d.change == DiffChange::ADDED ? d.b : d.a;
    const bool added = d.change == DiffChange::ADDED;
    row.details = {{tr("op"), added ? QString() : opText(side), added ? opText(side) : QString()},
                   {tr("inputs"), added ? QString() : joined(side.inputs), added ? joined(side.inputs) : QString()},
                   {tr("outputs"), added ? QString() : joined(side.outputs), added ? joined(side.outputs) : QString()}};
    row.summary = tr("%1 reads %2, writes %3").arg(opText(side), joined(side.inputs), joined(side.outputs));
    if (added) {
      row.inA = producersLocator(d, d.b);
      row.inB = nodeLocator(d, d.b);
    } else {
      row.inA = nodeLocator(d, d.a);
      row.inB = producersLocator(d, d.a);
    }
    return row;
  }
  auto add = [&](const QString& aspect, const QString& a, const QString& b) {
    row.details.push_back({aspect, a, b});
    parts << aspect + QLatin1Char(' ') + orAbsent(a) + kArrow + orAbsent(b);
  };
  if (d.opTypeChanged) add(tr("op"), opText(d.a), opText(d.b));
  for (const AttributeDiff& attribute : d.attributes) {
    add(qs(attribute.name), qs(attribute.valueA), qs(attribute.valueB));
  }
  if (d.inputsChanged) add(tr("inputs"), joined(d.a.inputs), joined(d.b.inputs));
  if (d.outputsChanged) add(tr("outputs"), joined(d.a.outputs), joined(d.b.outputs));
  row.summary = parts.join(QStringLiteral("; "));
  row.inA = nodeLocator(d, d.a);
  row.inB = nodeLocator(d, d.b);
  return row;
}

DiffRow initializerRow(const InitializerDiff& d) {
  DiffRow row;
  row.category = DiffRow::Category::Initializer;
  row.change = d.change;
  row.graph = qs(d.graph);
  row.name = qs(d.name);
  const QString hashA = d.typeA.empty() ? QString() : hexHash(d.hashA);
  const QString hashB = d.typeB.empty() ? QString() : hexHash(d.hashB);
  row.details = {{tr("type"), qs(d.typeA), qs(d.typeB)}, {tr("xxh3"), hashA, hashB}};
  if (d.change != DiffChange::CHANGED) {
    row.summary = qs(d.typeA.empty() ? d.typeB : d.typeA);
  } else if (d.typeChanged) {
    row.summary = qs(d.typeA) + kArrow + qs(d.typeB);
  } else {
    row.summary = tr("%1 content differs").arg(qs(d.typeA));  // the hashes are in the details
    if (d.differingElements >= 0) {
      const QString count = tr("%1 of %2").arg(d.differingElements).arg(d.elements);
      row.summary += QStringLiteral(" (%1 elements)").arg(count);
    }
  }
  const DiffLocator readers{DiffLocator::Kind::InitializerReaders, row.graph, row.name, {}};
  if (d.change != DiffChange::ADDED) row.inA = readers;
  if (d.change != DiffChange::REMOVED) row.inB = readers;
  return row;
}

// "2 changes: 1 node changed, 1 initializer changed", counted in the order the rows come, as `kiln diff` ends.
QString summaryOf(const QVector<DiffRow>& rows) {
  if (rows.isEmpty()) return tr("no differences");
  QVector<std::pair<DiffRow::Category, DiffChange>> kinds;  // in the order they first come
  QVector<int> counts;
  for (const DiffRow& row : rows) {
    const auto kind = std::make_pair(row.category, row.change);
    const qsizetype at = kinds.indexOf(kind);
    if (at >= 0) {
      ++counts[at];
    } else {
      kinds << kind;
      counts << 1;
    }
  }
  QStringList parts;
  for (qsizetype i = 0; i < kinds.size(); ++i) {
    parts << QStringLiteral("%1 %2%3 %4")
                 .arg(counts[i])
                 .arg(diffCategoryName(kinds[i].first), counts[i] == 1 ? QString() : QStringLiteral("s"),
                      QLatin1String(diffChangeName(kinds[i].second)));
  }
  const auto total = rows.size();
  return (total == 1 ? tr("1 change: %1") : tr("%1 changes: %2").arg(total))
      .arg(parts.join(QStringLiteral(", ")));
}

bool hasOutput(const GraphDocument& document, int node, const QString& value) {
  for (const std::string& output : document.nodeInfo(node).outputs) {
    if (qs(output) == value) return true;
  }
  return false;
}

}  // namespace

QString diffCategoryName(DiffRow::Category category) {
  switch (category) {
    case DiffRow::Category::Opset: return QStringLiteral("opset");
    case DiffRow::Category::Input: return QStringLiteral("input");
    case DiffRow::Category::Output: return QStringLiteral("output");
    case DiffRow::Category::Initializer: return QStringLiteral("initializer");
    case DiffRow::Category::Node: break;
  }
  return QStringLiteral("node");
}

ModelDiffRows modelDiffRows(const ModelDiff& diff) {
  ModelDiffRows result;
  result.pathA = qs(diff.pathA);
  result.pathB = qs(diff.pathB);
  for (const OpsetDiff& d : diff.opsets) result.rows << opsetRow(d);
  for (const ValueDiff& d : diff.inputs) result.rows << valueRow(d, true);
  for (const ValueDiff& d : diff.outputs) result.rows << valueRow(d, false);
  for (const NodeDiff& d : diff.nodes) result.rows << nodeRow(d);
  for (const InitializerDiff& d : diff.initializers) result.rows << initializerRow(d);
  for (const std::string& note : diff.notes) result.notes << qs(note);
  result.summary = summaryOf(result.rows);
  return result;
}

DiffNodeIndex::DiffNodeIndex(const GraphDocument& document) : document_(document) {
  const QVector<GraphNode>& nodes = document.nodes();
  for (int i = 0; i < nodes.size(); ++i) {
    const GraphNode& node = nodes[i];
    switch (node.kind) {
      case GraphNode::Kind::GraphInput:
        inputs_.insert(node.name, i);
        producers_[node.name] << i;
        break;
      case GraphNode::Kind::GraphOutput: outputs_.insert(node.name, i); break;
      case GraphNode::Kind::Op:
        if (!node.name.isEmpty()) opsByName_[node.name] << i;
        for (const std::string& output : document.nodeInfo(i).outputs) producers_[qs(output)] << i;
        for (const QString& constant : node.constantInputs) {
          QVector<int>& readers = readers_[constant];
          if (!readers.contains(document.drawnNode(i))) readers << document.drawnNode(i);
        }
        break;
    }
  }
}

QVector<int> DiffNodeIndex::locate(const DiffLocator& locator) const {
  QVector<int> found;
  if (locator.kind == DiffLocator::Kind::None || document_.graphPath() != locator.graph) return found;
  switch (locator.kind) {
    case DiffLocator::Kind::OpNode:
      if (!locator.name.isEmpty()) return opsByName_.value(locator.name);
      // Unnamed: the unnamed op node writing its first output (value names are unique in a graph).
      for (int node : producers_.value(locator.values.value(0))) {
        const GraphNode& candidate = document_.nodes()[node];
        if (candidate.kind == GraphNode::Kind::Op && candidate.name.isEmpty()) found << node;
      }
      return found;
    case DiffLocator::Kind::GraphInput:
      if (inputs_.contains(locator.name)) found << inputs_.value(locator.name);
      return found;
    case DiffLocator::Kind::GraphOutput:
      if (outputs_.contains(locator.name)) found << outputs_.value(locator.name);
      return found;
    case DiffLocator::Kind::InitializerReaders: return readers_.value(locator.name);
    case DiffLocator::Kind::Producers:
      for (const QString& value : locator.values) {
        for (int node : producers_.value(value)) {
          const int drawn = document_.drawnNode(node);
          if (drawn >= 0 && !found.contains(drawn)) found << drawn;
        }
      }
      return found;
    case DiffLocator::Kind::None: break;
  }
  return found;
}

QVector<int> locateDiffNodes(const GraphDocument& document, const DiffLocator& locator) {
  return DiffNodeIndex(document).locate(locator);
}

int matchingDiffNode(const GraphDocument& document, int node, const GraphDocument& other) {
  if (node < 0 || node >= document.nodes().size()) return -1;
  const GraphNode& wanted = document.nodes()[node];
  const std::vector<std::string> outputs =
      wanted.kind == GraphNode::Kind::Op ? document.nodeInfo(node).outputs : std::vector<std::string>{};
  for (int i = 0; i < other.nodes().size(); ++i) {
    const GraphNode& candidate = other.nodes()[i];
    if (candidate.kind != wanted.kind) continue;
    if (wanted.kind != GraphNode::Kind::Op || !wanted.name.isEmpty()) {
      if (candidate.name == wanted.name) return i;
      continue;
    }
    // Unnamed: the node writing the same value (value names are unique in a graph).
    if (candidate.name.isEmpty() && !outputs.empty() && hasOutput(other, i, qs(outputs.front()))) return i;
  }
  return -1;
}

QHash<int, DiffChange> diffMarks(const ModelDiffRows& diff, bool sideA, const DiffNodeIndex& index) {
  const GraphDocument& document = index.document();
  QHash<int, DiffChange> marks;
  for (const DiffRow& row : diff.rows) {
    const DiffLocator& locator = sideA ? row.inA : row.inB;
    if (!locator.isItself()) continue;
    // Reading a changed initializer changes what a node computes, not the node.
    const DiffChange change = locator.kind == DiffLocator::Kind::InitializerReaders ? DiffChange::CHANGED : row.change;
    for (int node : index.locate(locator)) {
      const int drawn = document.drawnNode(node);
      if (drawn < 0) continue;
      // A folded Constant added or removed changes the node it is drawn in; an added or removed node stays so.
      const DiffChange shown = drawn == node ? change : DiffChange::CHANGED;
      const auto it = marks.constFind(drawn);
      if (it == marks.constEnd() || it.value() == DiffChange::CHANGED) marks.insert(drawn, shown);
    }
  }
  return marks;
}

QHash<int, int> diffRowsByNode(const ModelDiffRows& diff, bool sideA, const DiffNodeIndex& index) {
  QHash<int, int> rows;
  for (bool readers : {false, true}) {
    for (int r = 0; r < diff.rows.size(); ++r) {
      const DiffLocator& locator = sideA ? diff.rows[r].inA : diff.rows[r].inB;
      if (!locator.isItself() || (locator.kind == DiffLocator::Kind::InitializerReaders) != readers) continue;
      for (int node : index.locate(locator)) {
        // A folded Constant's change is found on the node it is drawn in, too.
        for (int key : {node, index.document().drawnNode(node)}) {
          if (key >= 0 && !rows.contains(key)) rows.insert(key, r);
        }
      }
    }
  }
  return rows;
}

}  // namespace kiln::bridge
