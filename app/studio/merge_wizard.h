// MergeWizard: several compiled ctx models become one (kiln::mergeEpContextModels, `kiln merge`). Page 1 picks
// the models and their name prefixes, page 2 connects outputs of one model to inputs of another, page 3 previews
// the merged graph and every name conflict (Next stays disabled while there is one), page 4 writes the merged
// model and its combined binary on a worker thread and shows what was written.
#pragma once

#include <QList>
#include <QString>
#include <QWizard>

#include <optional>

#include "merge_plan.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace kiln::studio {

class MergeWizard : public QWizard {
  Q_OBJECT

 public:
  enum PageId { ModelsPage = 0, ConnectionsPage = 1, PreviewPage = 2, WritePage = 3 };

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
  // Starts writing (page 4's Write button); emits merged() or mergeFailed().
  void write();

  const QList<bridge::MergeModelEntry>& models() const { return models_; }
  const QList<bridge::MergeConnection>& connections() const { return connections_; }
  // The plan as it stands: merged inputs, outputs, EPContext nodes, conflicts and connection errors.
  bridge::MergePreview preview() const;
  // True when every listed model has been inspected (successfully or not).
  bool modelsSettled() const;
  const QString& lastError() const { return lastError_; }
  const std::optional<bridge::MergeOutcome>& outcome() const { return outcome_; }
  // The text page 4 shows after a write (files, weight deduplication) or its error.
  QString resultText() const;

 signals:
  void merged(const QString& outputModelPath);
  // The user asked to open the merged model (page 4's "Open merged model" after a write); the wizard then closes.
  void openRequested(const QString& modelPath);
  void mergeFailed(const QString& message);
  // Emitted whenever the last pending inspection of the listed models has reported.
  void modelsInspected();

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
  QLineEdit* outputEdit_;
  QPushButton* writeButton_;
  QLabel* resultLabel_;
  QPushButton* openButton_ = nullptr;  // shown once a write succeeded
  QString writtenPath_;                // what the last successful write produced
};

}  // namespace kiln::studio
