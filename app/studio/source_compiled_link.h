// Source ↔ compiled in the studio: with a compiled model shown beside its source, selecting an EPContext node
// highlights (and centers) the source nodes it replaced, and selecting a source node highlights the EPContext node
// that replaced it; where the counterpart sits in another graph (an If/Loop body), that graph opens first. The
// mapping is the bridge's (source_compiled_links.h). Also the transfer badges: a label on each edge where a value
// crosses between host and device, with its size.
#pragma once

#include <QObject>
#include <QVector>

class QGraphicsScene;

namespace kiln::bridge {
class GraphDocument;
struct GraphNodes;
}

namespace kiln::studio {

class GraphPanel;
class GraphView;

class SourceCompiledLink : public QObject {
  Q_OBJECT

 public:
  // Links the two panels for as long as this object lives.
  SourceCompiledLink(GraphPanel* source, GraphPanel* compiled, QObject* parent = nullptr);

  // The nodes last highlighted in the source and the compiled panel by a selection in the other (for tests).
  const QVector<int>& sourceHighlight() const { return sourceHighlight_; }
  const QVector<int>& compiledHighlight() const { return compiledHighlight_; }

 private:
  void onSourceSelected(int node);
  void onCompiledSelected(int node);
  void show(GraphPanel* panel, const bridge::GraphNodes& found, QVector<int>* kept);
  void onLaidOut(GraphPanel* panel, QVector<int>* kept);
  void highlight(GraphPanel* panel, const QVector<int>& nodes, QVector<int>* kept);

  GraphPanel* source_;
  GraphPanel* compiled_;
  QVector<int> sourceHighlight_, compiledHighlight_;
  GraphPanel* pendingPanel_ = nullptr;  // a panel opening another graph to highlight pendingNodes_ there
  QVector<int> pendingNodes_;
};

// Adds one badge per pair of drawn items that values cross between host and device ("H→D 1.2 MiB"), midway along
// the edge, to `view`'s scene. Returns the number of badges (0 for models with no EPContext node).
int addTransferBadges(GraphView* view, const bridge::GraphDocument& document);

}  // namespace kiln::studio
