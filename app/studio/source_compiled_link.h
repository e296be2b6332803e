// Source ↔ compiled in the studio: with a compiled model shown beside its source, selecting an EPContext node
// highlights (and centers) the source nodes it replaced, and selecting a source node highlights the EPContext node
// that replaced it. The mapping is the bridge's (source_compiled_links.h). Also the transfer badges: a label on
// each edge where a value crosses between host and device, with its size.
#pragma once

#include <QObject>
#include <QVector>

class QGraphicsScene;

namespace kiln::bridge {
class GraphDocument;
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
  void highlight(GraphPanel* panel, const QVector<int>& nodes, QVector<int>* kept);

  GraphPanel* source_;
  GraphPanel* compiled_;
  QVector<int> sourceHighlight_, compiledHighlight_;
};

// Adds one badge per pair of drawn items that values cross between host and device ("H→D 1.2 MiB"), midway along
// the edge, to `view`'s scene. Returns the number of badges (0 for models with no EPContext node).
int addTransferBadges(GraphView* view, const bridge::GraphDocument& document);

}  // namespace kiln::studio
