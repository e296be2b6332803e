// MainWindow: kiln-studio's top-level window. Opens a model through the bridge's ModelLoader (never on the UI
// thread) and shows its nodes in a table and its summary in a side panel.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QString>

#include <memory>

#include "kiln/model_info.h"

class QDockWidget;
class QLabel;
class QLineEdit;
class QMessageBox;
class QSortFilterProxyModel;
class QTableView;

namespace kiln::bridge {
class ModelLoader;
class NodeTableModel;
}  // namespace kiln::bridge

namespace kiln::studio {

class ModelSummaryView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts loading `path`; the window updates when modelLoaded or loadFailed is emitted.
  void openModel(const QString& path);

  // The model on display, or nullptr before the first successful load.
  const ModelInfo* modelInfo() const { return info_.get(); }
  // The last load error as shown to the user ("" when the last load succeeded), so tests need not click dialogs.
  const QString& lastError() const { return lastError_; }
  const bridge::NodeTableModel* nodeTableModel() const { return nodeModel_; }
  const ModelSummaryView* summaryView() const { return summary_; }
  QString loadTimeText() const;

 signals:
  void modelLoaded();
  void loadFailed(const QString& message);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createMenus(QDockWidget* summaryDock);
  void chooseModel();
  void fitColumns();
  void onLoaded(const ModelInfo& info, double loadMs);
  void onFailed(const QString& path, const QString& message);

  bridge::ModelLoader* loader_;
  bridge::NodeTableModel* nodeModel_;
  QSortFilterProxyModel* nodeProxy_;
  QTableView* nodeTable_;
  QLineEdit* filterEdit_;
  ModelSummaryView* summary_;
  QLabel* loadTimeLabel_;
  QPointer<QMessageBox> errorBox_;
  std::shared_ptr<const ModelInfo> info_;
  QString lastError_;
};

}  // namespace kiln::studio
