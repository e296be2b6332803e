// MergeWizard: several compiled ctx models become one (kiln::mergeEpContextModels, `kiln merge`). Page 1 picks
// the models and their name prefixes, page 2 connects outputs of one model to inputs of another, page 3 lists the
// merged inputs, outputs and EPContext nodes and every name conflict (Next stays disabled while there is one),
// page 4 draws the merged graph with the studio's graph view (built from the inspected inputs, nothing written),
// page 5 writes the merged model and its combined binary on a worker thread and shows what was written.
#pragma once

#include <QList>
#include <QString>
#include <QWizard>

#include <optional>

#include "graph_layout.h"
#include "merge_plan.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace kiln::studio {

class GraphView;

class MergeWizard : public QWizard {
  Q_OBJECT

 public:
  enum PageId { ModelsPage = 0, ConnectionsPage = 1, PreviewPage = 2, GraphPage = 3, WritePage = 4 };

  explicit MergeWizard(QWidget* parent = nullptr);
  ~MergeWizard() override;

  // Lists a ctx model (inspected on a worker thread) with `prefix`, or "<stem>_" when empty.
  void addModel(const QString& ctxPath, const QString& prefix = {});
  void removeModel(int row);
  void setPrefix(int row, const QString& prefix);
  // Feeds output `from` to input `to` (prefixed names, as the preview lists them).
  void addConnection(const QString& from, const QString& to);
  void removeConnection(int row);
  void setOutputPath(const QString& path);
  QString outputPath() const;
  // Starts writing (the write page's Write button); emits merged() or mergeFailed().
  void write();

  const QList<bridge::MergeModelEntry>& models() const { return models_; }
  const QList<bridge::MergeConnection>& connections() const { return connections_; }
  // The plan as it stands: merged inputs, outputs, EPContext nodes, conflicts and connection errors.
  bridge::MergePreview preview() const;
  // True when every listed model has been inspected (successfully or not).
  bool modelsSettled() const;
  const QString& lastError() const { return lastError_; }
  const std::optional<bridge::MergeOutcome>& outcome() const { return outcome_; }
  // The text the write page shows after a write (files, weight deduplication) or its error.
  QString resultText() const;
  // The merged graph the graph page draws (mergedGraphDocument of the plan as it stood when the page opened), or
  // nullptr before that page opened.
  std::shared_ptr<const bridge::GraphDocument> mergedGraph() const { return mergedGraph_; }
  GraphView* graphView() const { return graphView_; }
  // What the graph page says under the graph: what it shows, or why it could not be laid out.
  QString graphStatus() const;

 signals:
  void merged(const QString& outputModelPath);
  // The user asked to open the merged model (the write page's "Open merged model" after a write); the wizard then closes.
  void openRequested(const QString& modelPath);
  void mergeFailed(const QString& message);
  // Emitted whenever the last pending inspection of the listed models has reported.
  void modelsInspected();
  // The graph page has drawn the merged graph (or failed to lay it out: graphStatus() says why).
  void graphPreviewReady();

 protected:
  void initializePage(int id) override;
  bool validateCurrentPage() override;

 private:
  void chooseModels();
  void chooseOutput();
  void onModelInspected(const QString& path, std::shared_ptr<const EpContextModelInfo> info);
  void onModelFailed(const QString& path, const QString& message);
  void onMerged(const bridge::MergeOutcome& outcome);
  void onMergeFailed(const QString& message);
  void planChanged();
  void refreshModelTable();
  void refreshConnectionTable();
  void refreshPreview();
  // Builds the merged graph from the plan and starts laying it out (graph page).
  void refreshGraph();
  void onGraphLaidOut(const bridge::GraphLayoutResult& result);
  // Fits the merged graph in the view, never enlarged past its natural size.
  void fitGraph();
  void setWriting(bool writing);

  bridge::MergeWorker* worker_;
  QList<bridge::MergeModelEntry> models_;
  QList<bridge::MergeConnection> connections_;
  std::optional<bridge::MergeOutcome> outcome_;
  QString lastError_;
  bool writing_ = false;

  // Page 1
  QTableWidget* modelTable_;
  QLabel* modelStatus_;
  // Page 2
  QTableWidget* connectionTable_;
  QLabel* connectionStatus_;
  // Page 3
  QTableWidget* inputTable_;
  QTableWidget* outputTable_;
  QTableWidget* nodeTable_;
  QListWidget* conflictList_;
  // Page 4
  GraphView* graphView_;
  bridge::GraphLayout* graphLayout_;
  QLabel* graphStatus_;
  std::shared_ptr<const bridge::GraphDocument> mergedGraph_;
  bridge::VisibleGraph mergedVisible_;
  // Page 5
  QLineEdit* outputEdit_;
  QPushButton* writeButton_;
  QLabel* resultLabel_;
  QPushButton* openButton_ = nullptr;  // shown once a write succeeded
  QString writtenPath_;                // what the last successful write produced
};

}  // namespace kiln::studio
