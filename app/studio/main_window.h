// MainWindow: kiln-studio's top-level window. The model on display is opened through the bridge's ModelLoader
// (never on the UI thread); the panels (nodes table, ...) are tabs of the central area, the model summary a dock.
// Desktop manners live here too: recent files, persistent window state, drag and drop, shortcuts, About.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QSettings>
#include <QString>

#include <memory>
#include <utility>

#include "kiln/model_info.h"
#include "overlay_binding.h"

class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QMessageBox;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace kiln::bridge {
class ModelLoader;
class NodeTableModel;
class RecentFiles;
class VulkanProbe;
}  // namespace kiln::bridge

namespace kiln::studio {

class BenchPanel;
class BinaryInspector;
class ComparePanel;
class CompilePanel;
class GraphPanel;
class MergeWizard;
class ModelDiffView;
class ModelSummaryView;
class PackageView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts loading `path`; the window updates when modelLoaded or loadFailed is emitted.
  void openModel(const QString& path);
  // Opens the bundled sample model (Help menu); false when the installation has none.
  bool openSampleModel();

  // The model on display, or nullptr before the first successful load.
  const ModelInfo* modelInfo() const { return info_.get(); }
  // The last load error as shown to the user ("" when the last load succeeded), so tests need not click dialogs.
  const QString& lastError() const { return lastError_; }
  const bridge::NodeTableModel* nodeTableModel() const { return nodeModel_; }
  const ModelSummaryView* summaryView() const { return summary_; }
  QTabWidget* tabs() const { return tabs_; }
  // The source model's graph, and beside it (once a compile finished) the compiled model's.
  GraphPanel* graphPanel() const { return graph_; }
  GraphPanel* compiledGraphPanel() const { return compiledGraph_; }
  CompilePanel* compilePanel() const { return compilePanel_; }
  BinaryInspector* binaryInspector() const { return inspector_; }
  BenchPanel* benchPanel() const { return benchPanel_; }
  ComparePanel* comparePanel() const { return comparePanel_; }
  // Opens the merge wizard (Tools > Merge), pre-filled with the ctx model on display, if any.
  MergeWizard* openMergeWizard();
  // Opens the model diff window (Tools > Diff Models) on `pathA` against `pathB`; `pathA` "" is the model on display.
  // One window: a second diff replaces the first one's models.
  ModelDiffView* openModelDiff(const QString& pathB, const QString& pathA = {});
  // Opens the model package at `folder` (kiln package) in its window: the variants, the one this machine would load,
  // and buttons that open a variant's graph here. openModel() on a package folder or its manifest.json comes here.
  PackageView* openPackage(const QString& folder);
  // Shows `path` (a context binary or a ctx model) in the binary inspector tab.
  void inspectBinary(const QString& path);
  // Selects, on the Graph tab, a node the binary inspector lists as a pipeline's user: the source graph's node of
  // that name (any graph, bodies included), else the EPContext node `epContextNode` running its partition (in the
  // compiled graph beside the source, or in the ctx model on display). False when no graph on display has either.
  bool showPipelineUser(const QString& node, const QString& epContextNode);
  QMenu* recentMenu() const { return recentMenu_; }
  QString loadTimeText() const;
  // The text the About box shows (versions of Kiln, Qt and the Vulkan drivers, licences).
  QString aboutText() const;

 signals:
  void modelLoaded();
  void loadFailed(const QString& message);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void createMenus();
  void rebuildRecentMenu();
  void chooseModel();
  void chooseBinary();
  void chooseDiffModels();
  void addPanel(QWidget* panel, const QString& title);
  void showPanel(QWidget* panel);
  void onCompiled(const QString& ctxModelPath);
  // Opens `ctxModelPath` in the compiled-graph panel beside the source on display, and in the binary inspector.
  void showCompiledBeside(const QString& ctxModelPath);
  // A ctx model on display: the summary names its source (from the compile record) with a button to open it.
  void offerSourceOfCompiled();
  // Opens `sourcePath` and, once loaded, the ctx model that was on display beside it.
  void openSourceBeside(const QString& sourcePath);
  // The ctx model beside the source was compiled from other bytes than the source now has: says so.
  void warnIfCompiledFromAnotherSource();
  void showAbout();
  void fitColumns();
  // The compare panel's per-node data on `panel`: coloured where it belongs (overlay_binding.h), else a note.
  void applyOverlay(GraphPanel* panel);
  bridge::OverlayBinding overlayBinding(GraphPanel* panel) const;
  // Focuses `node` (the first divergence) on a graph panel the data belongs on, opening its body graph when it is
  // in one; when no panel shows it, the status bar says why.
  void showOverlaidNode(QWidget* graphs, const QString& node);
  void onLoaded(const ModelInfo& info, double loadMs);
  void onFailed(const QString& path, const QString& message);

  QSettings settings_;
  std::unique_ptr<bridge::RecentFiles> recent_;
  bridge::ModelLoader* loader_;
  bridge::VulkanProbe* vulkanProbe_;
  bridge::NodeTableModel* nodeModel_;
  QSortFilterProxyModel* nodeProxy_;
  QTabWidget* tabs_;
  QTableView* nodeTable_;
  GraphPanel* graph_;
  GraphPanel* compiledGraph_;
  CompilePanel* compilePanel_;
  BinaryInspector* inspector_;
  BenchPanel* benchPanel_;
  ComparePanel* comparePanel_ = nullptr;
  QPointer<MergeWizard> mergeWizard_;
  QPointer<ModelDiffView> diffView_;
  QPointer<PackageView> packageView_;
  QLineEdit* filterEdit_;
  ModelSummaryView* summary_;
  QDockWidget* summaryDock_;
  QLabel* loadTimeLabel_;
  QMenu* recentMenu_ = nullptr;
  QPointer<QMessageBox> errorBox_;
  QPointer<QMessageBox> aboutBox_;
  std::shared_ptr<const ModelInfo> info_;
  QString lastError_;
  // Set by openSourceBeside: the source being opened and the ctx model to show beside it once it has loaded.
  std::pair<QString, QString> pendingCompiled_;
};

}  // namespace kiln::studio
