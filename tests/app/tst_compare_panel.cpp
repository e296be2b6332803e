// ComparePanel end to end: tiny_cnn.onnx on Vulkan (lavapipe in CI) against the CPU through kiln/compare.h on the
// panel's worker — the per-output table equals the engine's comparison, per-node errors fill the overlay; a run
// cancelled at once ends CANCELLED with nothing shown; per-node data and `kiln compare --json` files load, the
// first divergence is one click away, and bad files are reported.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "compare_panel.h"
#include "kiln/compiler.h"
#include "studio_test_files.h"

using kiln::studio::ComparePanel;
using kiln::testing::saveScreenshot;

namespace {

constexpr int kTimeoutMs = 120000;
QString tinyCnn() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

QString writeText(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (file.open(QIODevice::WriteOnly)) file.write(text);
  return path;
}

}  // namespace

class TestComparePanel : public QObject {
  Q_OBJECT

 private slots:
  void runsAndShowsTheTable() {
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("vulkan"), QStringLiteral("cpu"));
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QSignalSpy overlay(&panel, &ComparePanel::overlayChanged);
    QVERIFY(panel.run());
    QVERIFY(panel.isRunning());
    QVERIFY(!panel.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("cancelButton"))->isEnabled());
    QVERIFY2(finished.wait(kTimeoutMs), qPrintable(failed.isEmpty() ? panel.statusText() : failed.first().first().toString()));
    QVERIFY(!panel.isRunning());

    const auto& results = panel.results();
    QVERIFY(!results.outputs.isEmpty());
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("outputTable"));
    QCOMPARE(table->rowCount(), static_cast<int>(results.outputs.size()));
    for (int row = 0; row < table->rowCount(); ++row) {
      const auto& output = results.outputs[row];
      QCOMPARE(table->item(row, 0)->text(), output.name);
      QCOMPARE(table->item(row, 1)->text(), output.passed ? QStringLiteral("pass") : QStringLiteral("FAIL"));
      QCOMPARE(table->item(row, 2)->data(Qt::UserRole).toDouble(), output.maxAbsError);
      QVERIFY(output.cosineSimilarity > 0.99);  // lavapipe and the CPU agree on a small CNN
    }
    // Every node compared: the overlay has per-node errors, coloured by the largest absolute error.
    QVERIFY(!results.nodes.nodes.isEmpty());
    QCOMPARE(results.nodes.kind, QStringLiteral("compare"));
    QCOMPARE(panel.overlay().metric(), QStringLiteral("max_abs_error"));
    QVERIFY(!overlay.isEmpty());
    auto* top = panel.findChild<QTableWidget*>(QStringLiteral("topTable"));
    QVERIFY(top->rowCount() > 0);
    QCOMPARE(top->item(0, 0)->text(), panel.overlay().topNodes(1).first().first);
    // Every node's differences, binned: 14 decade bins counting all of its outputs' elements.
    for (const auto& node : results.nodes.nodes) {
      QCOMPARE(node.errorHistogram.size(), kiln::kErrorHistogramBins);
      qint64 counted = 0;
      for (qint64 count : node.errorHistogram) counted += count;
      QVERIFY2(counted > 0, qPrintable(node.node));
    }
    QVERIFY(panel.statusText().contains(QStringLiteral("output(s)")));
    saveScreenshot(&panel, QStringLiteral("compare_panel.png"), QSize(1100, 640));
  }

  void cancelEndsWithNothingShown() {
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("vulkan"), QStringLiteral("cpu"));
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QVERIFY(panel.run());
    panel.cancel();
    QVERIFY(failed.wait(kTimeoutMs));
    QCOMPARE(failed.first().first().toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(finished.count(), 0);
    QVERIFY(panel.statusText().startsWith(QStringLiteral("Cancelled")));
    QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("outputTable"))->rowCount(), 0);
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("runButton"))->isEnabled());
    // And it runs again afterwards.
    QVERIFY(panel.run());
    QVERIFY(finished.wait(kTimeoutMs));
  }

  void sourceAgainstItsCtxModelKeepsTheOutputTable() {
    QTemporaryDir dir;
    const QString ctx = dir.filePath(QStringLiteral("tiny_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(tinyCnn().toStdString()).setOutputModelPath(ctx.toStdString());
    auto compiled = kiln::compileModel(options);
    QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("cpu"), QStringLiteral("vulkan"), ctx);
    panel.setCompareEveryNode(true);  // not possible on a ctx model: said, while the outputs still compare
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QVERIFY(panel.run());
    QVERIFY2(finished.wait(kTimeoutMs), qPrintable(panel.statusText()));
    QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("outputTable"))->rowCount(), 1);
    QVERIFY(panel.results().outputs.first().passed);
    QVERIFY(panel.results().nodes.nodes.isEmpty());
    QVERIFY2(panel.statusText().contains(QStringLiteral("Per-node comparison did not run: NOT_IMPLEMENTED")),
             qPrintable(panel.statusText()));
    QVERIFY(panel.results().referenceLabel.startsWith(QStringLiteral("tiny_ctx.onnx")));
  }

  void noModelDoesNotStart() {
    ComparePanel panel;
    panel.setModelPath(QStringLiteral("/nonexistent/model.onnx"));
    QVERIFY(!panel.run());
    QVERIFY(!panel.isRunning());
  }

  void badShapeIsReported() {
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("cpu"), QStringLiteral("cpu"), {}, QStringLiteral("x=banana"));
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QVERIFY(panel.run());
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.first().first().toString().startsWith(QStringLiteral("INVALID_ARGUMENT")),
             qPrintable(failed.first().first().toString()));
  }

  void loadsNodeDataAndReachesTheFirstDivergence() {
    QTemporaryDir dir;
    const QString path = writeText(dir, QStringLiteral("nodes.json"), R"({
      "format": "kiln-node-data", "version": 1, "kind": "compare", "producer": "kiln compare", "model": "m.onnx",
      "summary": {"side": "vulkan", "reference": "cpu"},
      "nodes": [
        {"node": "conv1", "op_type": "Conv", "graph": "main", "metrics": {"max_abs_error": 0.0001}},
        {"node": "relu1", "op_type": "Relu", "graph": "main", "metrics": {"max_abs_error": 0.5}, "first_divergence": true,
         "abs_error_histogram": [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0]},
        {"node": "fc", "op_type": "Gemm", "graph": "main", "metrics": {"max_abs_error": 2.0}}
      ]})");
    ComparePanel panel;
    QSignalSpy loaded(&panel, &ComparePanel::loaded);
    QSignalSpy show(&panel, &ComparePanel::showNodeRequested);
    QVERIFY(panel.loadFile(path));
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(panel.results().nodes.nodes.size(), 3);
    QCOMPARE(panel.results().firstDivergence, QStringLiteral("relu1"));
    // The histogram of differences loads where the file has one; files without the key (older CLIs) still load.
    QCOMPARE(panel.overlay().row(QStringLiteral("relu1"))->errorHistogram,
             (QVector<qint64>{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0}));
    QVERIFY(panel.overlay().row(QStringLiteral("conv1"))->errorHistogram.isEmpty());
    auto* button = panel.findChild<QPushButton*>(QStringLiteral("divergenceButton"));
    QVERIFY(!button->isHidden());
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(show.count(), 1);
    QCOMPARE(show.first().first().toString(), QStringLiteral("relu1"));
    QCOMPARE(panel.overlay().colorFor(QStringLiteral("fc")).value(), panel.overlay().colorForValue(2.0));

    // Another model opened: nothing of these results stays (the overlay would colour the new model's nodes).
    QSignalSpy overlay(&panel, &ComparePanel::overlayChanged);
    panel.setModelPath(tinyCnn());
    QVERIFY(panel.results().nodes.nodes.isEmpty());
    QVERIFY(panel.results().firstDivergence.isEmpty());
    QVERIFY(panel.overlay().isEmpty());
    QVERIFY(button->isHidden());
    QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("topTable"))->rowCount(), 0);
    QCOMPARE(overlay.count(), 1);
  }

  void profileDataColoursByTime() {
    QTemporaryDir dir;
    const QString path = writeText(dir, QStringLiteral("profile.json"), R"({
      "format": "kiln-node-data", "version": 1, "kind": "profile", "producer": "kiln run", "model": "m.onnx",
      "nodes": [
        {"node": "conv1", "op_type": "Conv", "metrics": {"time_ms": 4.0, "calls": 1}},
        {"node": "relu1", "op_type": "Relu", "metrics": {"time_ms": 0.5, "calls": 1}}
      ]})");
    ComparePanel panel;
    QVERIFY(panel.loadFile(path));
    QCOMPARE(panel.results().nodes.kind, QStringLiteral("profile"));
    QCOMPARE(panel.overlay().metric(), QStringLiteral("time_ms"));  // time, not the call count
    auto* top = panel.findChild<QTableWidget*>(QStringLiteral("topTable"));
    QCOMPARE(top->rowCount(), 2);
    QCOMPARE(top->item(0, 0)->text(), QStringLiteral("conv1"));
    QCOMPARE(top->item(0, 2)->text(), QStringLiteral("4 ms"));
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("divergenceButton"))->isHidden());
    panel.setMetric(QStringLiteral("calls"));
    QCOMPARE(panel.overlay().metric(), QStringLiteral("calls"));
  }

  // A partition entry with covered_ms (kiln run --profile with kiln.vulkan.profile=1) becomes one row per named
  // covered node; covered_ms that does not match covers (other length, not numbers) leaves the partition row alone.
  void partitionCoveredTimesBecomeNodeRows() {
    QTemporaryDir dir;
    const QString path = writeText(dir, QStringLiteral("vk.json"), R"json({
      "format": "kiln-node-data", "version": 1, "kind": "profile", "producer": "kiln run", "model": "m.onnx",
      "nodes": [
        {"node": "vulkan_0", "op_type": "KilnPartition", "metrics": {"time_ms": 9.0},
         "execution_provider": "VulkanExecutionProvider",
         "covers": ["'conv1' (Conv)", "'relu1' (Relu)", "(Add)"], "covered_ms": [3.0, 0, 1.0]},
        {"node": "vulkan_1", "op_type": "KilnPartition", "metrics": {"time_ms": 2.0},
         "covers": ["'fc' (Gemm)", "'sm' (Softmax)"], "covered_ms": [1.0]},
        {"node": "vulkan_2", "op_type": "KilnPartition", "metrics": {"time_ms": 1.0},
         "covers": ["'gap' (GlobalAveragePool)"], "covered_ms": ["fast"]}
      ]})json");
    ComparePanel panel;
    QVERIFY(panel.loadFile(path));
    const auto& rows = panel.results().nodes.nodes;
    QCOMPARE(rows.size(), 4);  // conv1, relu1 (the unnamed Add cannot be found by name), vulkan_1, vulkan_2
    QCOMPARE(rows[0].node, QStringLiteral("conv1"));
    QCOMPARE(rows[0].opType, QStringLiteral("Conv"));
    QCOMPARE(rows[0].executionProvider, QStringLiteral("VulkanExecutionProvider"));
    QCOMPARE(panel.overlay().value(QStringLiteral("conv1")).value(), 3.0);
    QCOMPARE(panel.overlay().value(QStringLiteral("relu1")).value(), 0.0);
    QVERIFY(!panel.overlay().value(QStringLiteral("vulkan_0")));
    QCOMPARE(rows[2].node, QStringLiteral("vulkan_1"));
    QCOMPARE(panel.overlay().value(QStringLiteral("vulkan_1")).value(), 2.0);
    QCOMPARE(rows[3].node, QStringLiteral("vulkan_2"));
  }

  void loadsACompareReport() {
    QTemporaryDir dir;
    const QString path = writeText(dir, QStringLiteral("report.json"), R"({
      "model": "m.onnx", "side": "vulkan", "reference": "cpu", "passed": false,
      "outputs": [{"name": "y", "passed": false, "dtype": "float32", "shape": [1, 10], "elements": 10,
                   "max_abs_error": 0.25, "max_rel_error": "inf", "mean_abs_error": 0.1, "cosine_similarity": 0.9,
                   "fraction_beyond_tolerance": 0.3, "beyond_tolerance": 3}],
      "first_divergence": {"node": "fc", "op_type": "Gemm", "inputs": [], "outputs": []}})");
    ComparePanel panel;
    QVERIFY(panel.loadFile(path));
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("outputTable"));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("y"));
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("FAIL"));
    QCOMPARE(table->item(0, 7)->text(), QStringLiteral("1x10"));
    QVERIFY(std::isinf(panel.results().outputs.first().maxRelError));
    QCOMPARE(panel.results().firstDivergence, QStringLiteral("fc"));
  }

  void badFilesAreReported() {
    QTemporaryDir dir;
    ComparePanel panel;
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QVERIFY(!panel.loadFile(writeText(dir, QStringLiteral("a.json"), "not json")));
    QVERIFY(!panel.loadFile(writeText(dir, QStringLiteral("b.json"), R"({"hello": 1})")));
    QVERIFY(!panel.loadFile(writeText(dir, QStringLiteral("c.json"), R"({"format": "kiln-node-data", "version": 99, "nodes": []})")));
    QVERIFY(!panel.loadFile(dir.filePath(QStringLiteral("missing.json"))));
    QCOMPARE(failed.count(), 4);
    QVERIFY(failed.at(1).first().toString().contains(QStringLiteral("neither per-node data")));
    QVERIFY(failed.at(3).first().toString().startsWith(QStringLiteral("NO_SUCHFILE")));
  }
};

QTEST_MAIN(TestComparePanel)
#include "tst_compare_panel.moc"
