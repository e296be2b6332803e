// GraphPanel: the graph view of a model: a toolbar (search by name or op type, fit, zoom, expand/collapse all
// partitions, export PNG/SVG, cancel), a legend of EP colors, the view and a status line with the load and layout
// times. Loading (inspect + partition analysis) runs on a worker, the layout in a `dot` process: the UI never
// waits. Big graphs open with their partitions collapsed and their groups (graph_groups.h: name scopes, or
// stretches between narrow points) collapsed, so the first layout is small and fast and Fit shows the whole model
// with legible titles; a double-click opens a partition or a group. If/Loop/Scan
// bodies open as their own graph (double-click the node, or its "Open" link) under a breadcrumb
// (main > branch > else_branch) whose steps go back; search covers every graph.
#pragma once

#include <QSet>
#include <QString>
#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>

#include "graph_document.h"
#include "graph_layout.h"
#include "input_shapes_text.h"

class QAction;
class QLabel;
class QLineEdit;
class QGraphicsScene;
class QToolButton;
class QSplitter;

namespace kiln::bridge {
class GraphLoader;
}

namespace kiln::studio {

class FlowLayout;
class GraphView;
class NodeDetailsView;

class GraphPanel : public QWidget {
  Q_OBJECT

 public:
  // Graphs with more op nodes than this open with every partition collapsed.
  static constexpr int kCollapseThreshold = 800;

  // Narrower than this, the node details sit below the graph instead of beside it.
  static constexpr int kNarrowWidth = 720;

  explicit GraphPanel(QWidget* parent = nullptr);
  ~GraphPanel() override;

  // Loads and lays out `path`; emits layoutReady() or failed(). A newer openModel() or cancel() drops this one.
  void openModel(const QString& path);
  // Kills dot and drops a load in flight; neither layoutReady() nor failed() follows.
  void cancel();
  bool isBusy() const;

  NodeDetailsView* detailsView() const { return details_; }

  // Shows graph `path` ("main" or a body's path) and selects the node named `selectNode` there, if any. False
  // when the model has no such graph.
  bool openGraph(const QString& path, const QString& selectNode = {});
  QString currentGraphPath() const;
  // The breadcrumb as plain text: "main ▸ branch ▸ else_branch".
  QString breadcrumbText() const;
  // Shows node `modelIndex` of graph `path` (an index into that graph's NodeInfo list), opening the graph first.
  void showModelNode(const QString& path, int modelIndex);

  // Partitions (clusters of the document): collapse or expand, then re-layout (layoutReady() again).
  void setClusterCollapsed(int cluster, bool collapsed);
  void expandAll();
  void collapseAll();
  bool isClusterCollapsed(int cluster) const { return collapsed_.contains(cluster); }
  // Groups (GraphDocument::groups): likewise.
  void setGroupCollapsed(int group, bool collapsed);
  bool isGroupCollapsed(int group) const { return collapsedGroups_.contains(group); }

  // Search by node name or op type: highlights the matches, selects the first; returns the number of matches.
  int search(const QString& text);
  void findNext();
  void findPrevious();

  // Input shapes (graph_panel_shapes.cpp): "x=1x3x640x640" re-runs the engine's shape inference with those inputs
  // fixed, so node details, the Nodes table and edge labels show concrete dimensions; "" goes back to the declared
  // shapes. The graph on display stays until the new one is ready. A text that does not parse, or shapes the
  // engine refuses (unknown input, other rank), change nothing: inputShapesRejected(message) and the message
  // under the graph. False when the text was refused at once.
  bool applyInputShapes(const QString& text);
  const bridge::InputShapes& inputShapes() const { return inputShapes_; }

  // Writes the whole graph. False with `error` set when the file cannot be written (nothing partial stays).
  bool exportSvg(const QString& path, QString* error);
  bool exportPng(const QString& path, QString* error);

  // Test and benchmark hooks. document() is the graph on display, rootDocument() the main graph (with the bodies).
  std::shared_ptr<const bridge::GraphDocument> document() const { return document_; }
  std::shared_ptr<const bridge::GraphDocument> rootDocument() const { return root_; }
  const QVector<bridge::GraphHit>& searchMatches() const { return matches_; }
  GraphView* view() const { return view_; }
  QGraphicsScene* scene() const;
  double lastLoadMs() const { return loadMs_; }
  double lastLayoutMs() const { return layoutMs_; }
  QString statusText() const;
  void selectNode(int node);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 signals:
  void layoutReady();
  void failed(const QString& message);
  void nodeSelected(const QString& nodeName);
  void inspectBinaryRequested(const QString& binaryPath);
  // The model was re-inferred with inputShapes() (rootDocument() holds the new shapes).
  void inputShapesApplied();
  void inputShapesRejected(const QString& message);

 private:
  void onLoaded(std::shared_ptr<const bridge::GraphDocument> document, double loadMs);
  void onLayoutFinished(const bridge::GraphLayoutResult& result);
  void relayout();
  void updateLegend();
  void updateSearchLabel();
  void updateBreadcrumb();
  void highlightMatches();
  void showDocument(std::shared_ptr<const bridge::GraphDocument> document);
  void goToMatch(int index);
  void setBusy(bool busy);
  void exportWithDialog(bool svg);
  // Input shapes (graph_panel_shapes.cpp): the row under the legend, and the loader's answers to a re-inference.
  QWidget* createInputShapesRow();
  void resetInputShapes();
  bool onInputShapesLoaded();  // true when the document loaded came from applyInputShapes
  bool onInputShapesFailed(const QString& message);  // likewise, for a failure
  void rejectInputShapes(const QString& message);

  bridge::GraphLoader* loader_;
  bridge::GraphLayout* layout_;
  GraphView* view_;
  NodeDetailsView* details_;
  QLineEdit* searchEdit_;
  QLabel* matchLabel_;
  QLabel* status_;
  QLabel* breadcrumb_;
  QSplitter* splitter_ = nullptr;
  QString plainCrumbs_;
  FlowLayout* legend_;  // wraps in narrow panels
  QToolButton* cancelButton_;
  QAction* cancelAction_ = nullptr;  // the toolbar's handle on cancelButton_: shown while loading or laying out
  QList<QWidget*> graphActions_;  // enabled only while a graph is shown

  QString path_;
  std::shared_ptr<const bridge::GraphDocument> root_;      // the main graph, holding the bodies
  std::shared_ptr<const bridge::GraphDocument> document_;  // the graph on display
  QString selectAfterLayout_;  // a node name to select once the graph opened by openGraph() is laid out
  QSet<int> collapsed_;
  QSet<int> collapsedGroups_;
  bridge::VisibleGraph visible_;
  bool fitOnLayout_ = true;
  int focusAfterLayout_ = -1;  // a search match inside a partition that was collapsed
  QVector<bridge::GraphHit> matches_;
  int currentMatch_ = -1;
  double loadMs_ = 0, layoutMs_ = 0;
  QWidget* shapesRow_ = nullptr;
  QLineEdit* shapesEdit_ = nullptr;
  QLabel* shapesMessage_ = nullptr;
  bridge::InputShapes inputShapes_;                 // the shapes the document on display was inferred with
  std::optional<bridge::InputShapes> pendingShapes_;  // being applied
  QString shapesGraphPath_;                          // the graph on display when they were applied
  QString statusBeforeShapes_;
};

}  // namespace kiln::studio
