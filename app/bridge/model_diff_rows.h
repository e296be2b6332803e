// The model diff as kiln-studio shows it: kiln::diffModels' result (kiln/model_diff.h, what `kiln diff` prints) turned
// into one row per change, in the engine's order (opsets, inputs, outputs, nodes, initializers), each with the
// A-against-B details of what changed and where it sits in each model's graphs: the node, the graph input or output,
// the nodes reading an initializer, or, for a node only one side has, the nodes producing its inputs on the other
// side. Also which drawn nodes of a graph to colour added, removed or changed. Qt-Core only, so it is tested headless.
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include "graph_document.h"
#include "kiln/model_diff.h"

namespace kiln::bridge {

// Where a change sits in one model's graphs.
struct DiffLocator {
  enum class Kind {
    None,                // nowhere to show it (an opset; the side that lacks an initializer)
    OpNode,              // the node named `name` (unnamed: the node writing `values`, its outputs)
    GraphInput,          // the graph input named `name`
    GraphOutput,         // the graph output named `name`
    InitializerReaders,  // the nodes reading initializer `name`
    Producers,           // the nodes (or graph inputs) producing `values`: where a node the other side has would sit
  };
  Kind kind = Kind::None;
  QString graph;  // "main", or a body path ("main/If_0.then_branch")
  QString name;
  QStringList values;

  // True for the kinds that are the changed item itself; Producers and None only point near it.
  bool isItself() const { return kind != Kind::None && kind != Kind::Producers; }
};

// One aspect of a change as A has it against B: an attribute ("strides"), "op", "inputs", "outputs", "type",
// "content". "" on the side that lacks it.
struct DiffDetail {
  QString aspect, a, b;
};

struct DiffRow {
  enum class Category { Opset, Input, Output, Node, Initializer };
  Category category = Category::Node;
  DiffChange change = DiffChange::CHANGED;
  QString graph;   // "" for opsets
  QString name;    // the node, value or initializer; the opset's domain ("ai.onnx" for the default one)
  QString opType;  // nodes: "Conv" (B's for an added node, A's otherwise)
  QString summary;  // one line: "strides [1, 1] -> [2, 2]; inputs [x, W, B] -> [x_gate, W, B]"
  QVector<DiffDetail> details;
  DiffLocator inA, inB;
};

// "opset", "input", "output", "node", "initializer".
QString diffCategoryName(DiffRow::Category category);

struct ModelDiffRows {
  QString pathA, pathB;
  QVector<DiffRow> rows;
  QStringList notes;  // how the diff was made (unnamed nodes paired by position), never a change
  // As `kiln diff` ends: "3 changes: 2 nodes changed, 1 initializer changed", or "no differences".
  QString summary;
  bool identical() const { return rows.isEmpty(); }
};

// The rows of `diff`, one per change (as many as diff.changeCount()).
ModelDiffRows modelDiffRows(const ModelDiff& diff);

// Where diff rows sit in one graph document: its nodes by name, by the values they write, by the initializers they
// read, and its graph inputs and outputs, hashed once, so a 10,000-node graph with thousands of changes is coloured
// and followed without a scan of every node per change. Holds a reference to `document`.
class DiffNodeIndex {
 public:
  explicit DiffNodeIndex(const GraphDocument& document);
  const GraphDocument& document() const { return document_; }
  // The nodes (indices into document().nodes()) that `locator` points at; empty when the document is another graph
  // than the locator's or holds none of them.
  QVector<int> locate(const DiffLocator& locator) const;

 private:
  const GraphDocument& document_;
  QHash<QString, QVector<int>> opsByName_;   // named op nodes
  QHash<QString, QVector<int>> producers_;   // value -> the op node writing it, or the graph input of that name
  QHash<QString, QVector<int>> readers_;     // initializer or Constant output -> the drawn nodes reading it
  QHash<QString, int> inputs_, outputs_;     // graph inputs and outputs by name
};

// DiffNodeIndex(document).locate(locator), for a single look-up.
QVector<int> locateDiffNodes(const GraphDocument& document, const DiffLocator& locator);

// The counterpart in `other` (a document of the other model, same graph path) of node `node` of `document`: the op
// node of the same name (unnamed: writing the same first output), or the graph input or output of the same name;
// -1 when `other` has none.
int matchingDiffNode(const GraphDocument& document, int node, const GraphDocument& other);

// How each drawn node of `index`'s document changed, for the side `sideA` (true: model A, coloured removed and
// changed; false: model B, added and changed): the node itself added, removed or changed, a graph input or output
// changed, or a node reading a changed initializer (changed). Nodes not in the hash are unchanged.
QHash<int, DiffChange> diffMarks(const ModelDiffRows& diff, bool sideA, const DiffNodeIndex& index);

// The change (an index into diff.rows) each node of `index`'s document is part of on side `sideA`: its own change
// (the node, a graph input or output) before that of an initializer it reads; the first such row when several are.
QHash<int, int> diffRowsByNode(const ModelDiffRows& diff, bool sideA, const DiffNodeIndex& index);

}  // namespace kiln::bridge
