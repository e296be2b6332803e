// BinaryInspector: a context binary (<stem>_vulkan.bin) or a ctx model (<stem>_ctx.onnx) taken apart: header
// fields with their meaning, the section table with a hex view of the selected section, graphs, SPIR-V variant
// keys, weight deduplication and the verdict against a chosen device or device profile. Everything the engine
// computes runs on the bridge's worker thread; the hex view reads only the lines it shows.
#pragma once

#include <QString>
#include <QWidget>

#include <optional>

#include "binary_inspection.h"
#include "hex_view.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QTabWidget;
class QTableWidget;

namespace kiln::studio {

class BinaryInspector : public QWidget {
  Q_OBJECT

 public:
  explicit BinaryInspector(QWidget* parent = nullptr);
  ~BinaryInspector() override;

  // Inspects a .bin or a ctx .onnx; returns at once, then emits inspected() or failed().
  void inspect(const QString& path);

  // What is on display (nullopt before the first successful inspection), and the last error ("" after success).
  const std::optional<bridge::Inspection>& inspection() const { return inspection_; }
  const QString& lastError() const { return lastError_; }
  // Shows binary `index` of a ctx model (0 for a .bin).
  void selectBinary(int index);
  // Selects row `row` of the section table (its hex view shows below).
  void selectSection(int row);
  // Judges the binary on display against the device (selector: index or name substring, "" for the default) or,
  // with a non-empty `profilePath`, against a device profile; emits verdictShown() when the answer is on screen.
  void checkAgainst(const QString& deviceSelector, const QString& profilePath = {});
  // The verdict text as shown ("optimal", "compatible", "unsupported", or an error), and its reasons.
  QString verdictText() const;
  QStringList verdictReasons() const;
  HexView* hexView() const { return hexView_; }
  // Shows the SPIR-V disassembly of pipeline `row` of the SPIR-V tab's table (the binary on display).
  void selectPipeline(int row);
  // The disassembly text on display ("" before a pipeline is selected).
  QString disassemblyText() const;
  // The nodes listed for the selected pipeline, as shown ("conv1 (vulkan_0)"); empty when none is selected or the
  // binary does not record them (pipelineUsersNote() then says so).
  QStringList pipelineUserNames() const;
  QString pipelineUsersNote() const;
  // Clicks entry `row` of the selected pipeline's node list: emits nodeRequested().
  void activatePipelineUser(int row);

 signals:
  void inspected();
  void failed(const QString& message);
  void verdictShown();
  void devicesListed();
  // A node of the SPIR-V tab's node list was clicked: `node` in partition `graph`'s graph, run by EPContext node
  // `epContextNode` ("" for a bare .bin). The main window selects it in the graph.
  void nodeRequested(const QString& graph, const QString& node, const QString& epContextNode);

 private:
  void chooseFile();
  void onInspected(const bridge::Inspection& inspection);
  void onFailed(const QString& path, const QString& message);
  void onSectionSelected();
  void onDevicesListed(const QList<VulkanDeviceDescription>& devices);
  void onTargetChosen(int index);
  void showBinary(int index);
  void showPipelines(const bridge::InspectedBinary& binary);
  void showDamage(const bridge::InspectedBinary& binary);
  void onPipelineSelected();
  void showNodes(const EpContextModelInfo& model);
  void showVerdict(const CompatibilityVerdict& verdict);
  void showVerdictError(const QString& message);
  void requestVerdict();

  bridge::BinaryInspectionWorker* worker_;
  QLineEdit* pathEdit_;
  QLabel* summaryLabel_;
  QComboBox* binaryCombo_;
  QLabel* binaryLabel_;
  QTabWidget* tabs_;
  QWidget* nodesTab_;
  QTableWidget* nodeTable_;
  QTableWidget* headerTable_;
  QTableWidget* sectionTable_;
  QLabel* sectionCaption_;
  HexView* hexView_;
  QTableWidget* graphTable_;
  QLabel* spirvSummary_;
  QTableWidget* spirvTable_;
  QPlainTextEdit* disassembly_;
  QListWidget* usersList_;  // the selected pipeline's nodes; clicking one selects it in the graph
  QLabel* usersCaption_;
  QTableWidget* weightsTable_;
  QComboBox* deviceCombo_;
  QLabel* verdictLabel_;
  QLabel* againstLabel_;
  QLabel* reasonsCaption_;
  QListWidget* reasonsList_;
  std::optional<bridge::Inspection> inspection_;
  int binaryIndex_ = -1;
  QString lastError_;
  QString lastProfile_;
};

}  // namespace kiln::studio
