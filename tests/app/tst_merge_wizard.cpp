// MergeWizard end to end: tiny_cnn.onnx compiled twice, the two ctx models merged with prefixes through the real
// worker and engine; the preview checked against inspectEpContextModel before and after writing; identical prefixes
// and an output that would overwrite an input refused with nothing written. Set KILN_STUDIO_SCREENSHOTS=<folder> to
// save the preview page.
#include <QAbstractButton>
#include <QDir>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <set>

#include "kiln/compiler.h"
#include "kiln/epcontext.h"
#include "merge_plan.h"
#include "graph_view.h"
#include "merge_wizard.h"
#include "studio_test_files.h"

using kiln::studio::GraphNodeItem;
using kiln::studio::MergeWizard;
using kiln::testing::fileBytes;
using kiln::testing::saveScreenshot;

namespace {

constexpr int kTimeoutMs = 60000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

bool waitForModels(MergeWizard& wizard) {
  QSignalSpy settled(&wizard, &MergeWizard::modelsInspected);
  return wizard.modelsSettled() || settled.wait(kTimeoutMs);
}

std::set<std::string> nodeNames(const kiln::EpContextModelInfo& info) {
  std::set<std::string> names;
  for (const auto& node : info.nodes) names.insert(node.name);
  return names;
}

// The graph page draws one EPContext node per partition of every input, named with the input's prefix, inside a
// partition named with it too, and every merged graph input and output.
void checkMergedGraph(MergeWizard& wizard, const QList<QPair<QString, const kiln::EpContextModelInfo*>>& inputs) {
  const auto document = wizard.mergedGraph();
  QVERIFY2(document, qPrintable(wizard.graphStatus()));
  QSet<QString> expected;
  for (const auto& [prefix, info] : inputs) {
    for (const auto& node : info->nodes) {
      if (node.graph == "main") expected.insert(prefix + QString::fromStdString(node.name));
    }
  }
  QSet<QString> drawn;
  for (GraphNodeItem* item : wizard.graphView()->nodeItems()) {
    if (!item->isEpContext()) continue;
    drawn.insert(item->subtitle());
    // Legible at the page's zoom: the prefixed name is one of the texts the node draws.
    bool named = false;
    for (const auto& label : item->labelsAt(wizard.graphView()->zoom())) named |= label.text == item->subtitle();
    QVERIFY2(named, qPrintable(item->subtitle()));
  }
  QCOMPARE(drawn, expected);
  QCOMPARE(wizard.graphView()->nodeItems().size(), static_cast<qsizetype>(document->nodes().size()));
  for (int i = 0; i < document->nodes().size(); ++i) {
    const auto& node = document->nodes()[i];
    if (!node.epContext) continue;
    QCOMPARE(node.executionProvider, QStringLiteral("VulkanExecutionProvider"));
    const int cluster = document->clusterOf(i);
    QVERIFY(cluster >= 0);
    QVERIFY2(document->clusters()[cluster].name.startsWith(node.name.left(2)), qPrintable(document->clusters()[cluster].name));
    QCOMPARE(document->clusters()[cluster].nodes.size(), 1);
  }
  const kiln::bridge::MergePreview preview = wizard.preview();
  QSet<QString> values, drawnInputs, drawnOutputs;
  for (const auto& node : document->nodes()) {
    if (node.kind == kiln::bridge::GraphNode::Kind::GraphInput) drawnInputs.insert(node.name);
    if (node.kind == kiln::bridge::GraphNode::Kind::GraphOutput) drawnOutputs.insert(node.name);
  }
  for (const auto& input : preview.inputs) values.insert(input.name);
  QCOMPARE(drawnInputs, values);
  values.clear();
  for (const auto& output : preview.outputs) values.insert(output.name);
  QCOMPARE(drawnOutputs, values);
  QVERIFY2(wizard.graphStatus().contains(QStringLiteral("%1 EPContext node(s)").arg(expected.size())),
           qPrintable(wizard.graphStatus()));
}

}  // namespace

class TestMergeWizard : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    aPath_ = dir_.filePath(QStringLiteral("a_ctx.onnx"));
    bPath_ = dir_.filePath(QStringLiteral("b_ctx.onnx"));
    for (const QString& path : {aPath_, bPath_}) {
      kiln::ModelCompilationOptions options;
      options.setInputModelPath(tinyCnnPath().toStdString()).setOutputModelPath(path.toStdString());
      auto compiled = kiln::compileModel(options);
      QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    }
    auto a = kiln::inspectEpContextModel(aPath_.toStdString());
    QVERIFY2(a.isOk(), a.status().toString().c_str());
    aInfo_ = *a;
    QVERIFY(!aInfo_.nodes.empty());
  }

  void defaultPrefixIsStem() {
    QCOMPARE(kiln::bridge::defaultMergePrefix(QStringLiteral("/x/det_ctx.onnx")), QStringLiteral("det_"));
    QCOMPARE(kiln::bridge::defaultMergePrefix(QStringLiteral("/x/model.onnx")), QStringLiteral("model_"));
    MergeWizard wizard;
    wizard.addModel(aPath_);
    QCOMPARE(wizard.models().first().prefix, QStringLiteral("a_"));
  }

  void mergesTwoModels() {
    MergeWizard wizard;
    wizard.show();
    QVERIFY(!wizard.button(QWizard::NextButton)->isEnabled());  // no models yet
    wizard.addModel(aPath_, QStringLiteral("a_"));
    wizard.addModel(bPath_, QStringLiteral("b_"));
    QVERIFY(waitForModels(wizard));
    QVERIFY(wizard.models()[0].info && wizard.models()[1].info);

    const kiln::bridge::MergePreview preview = wizard.preview();
    QVERIFY2(preview.ok(), qPrintable((preview.problems + preview.conflicts + preview.connectionErrors).join(QLatin1Char('\n'))));
    QCOMPARE(preview.nodes.size(), static_cast<qsizetype>(2 * aInfo_.nodes.size()));
    QCOMPARE(preview.inputs.size(), static_cast<qsizetype>(2 * aInfo_.inputs.size()));
    QCOMPARE(preview.outputs.size(), static_cast<qsizetype>(2 * aInfo_.outputs.size()));
    QCOMPARE(preview.inputs.first().name, QStringLiteral("a_") + QString::fromStdString(aInfo_.inputs[0].name));
    QCOMPARE(preview.inputs.last().name, QStringLiteral("b_") + QString::fromStdString(aInfo_.inputs.back().name));
    QVERIFY(preview.inputs.first().type.startsWith(QStringLiteral("float32[")));

    // Models -> Connections -> Preview: Next is enabled on every page of a conflict-free plan.
    QVERIFY(wizard.button(QWizard::NextButton)->isEnabled());
    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::ConnectionsPage));
    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::PreviewPage));
    QVERIFY(wizard.button(QWizard::NextButton)->isEnabled());
    auto* nodes = wizard.findChild<QTableWidget*>(QStringLiteral("previewNodes"));
    QCOMPARE(nodes->rowCount(), static_cast<int>(preview.nodes.size()));
    auto* conflicts = wizard.findChild<QListWidget*>(QStringLiteral("conflictList"));
    QCOMPARE(conflicts->count(), 1);  // the "no conflicts" line
    QVERIFY(conflicts->item(0)->text().startsWith(QStringLiteral("No name conflicts")));
    saveScreenshot(&wizard, QStringLiteral("merge_preview.png"));

    // Preview -> the merged graph, drawn before anything is written.
    QSignalSpy graphReady(&wizard, &MergeWizard::graphPreviewReady);
    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::GraphPage));
    QVERIFY(graphReady.count() > 0 || graphReady.wait(kTimeoutMs));
    checkMergedGraph(wizard, {{QStringLiteral("a_"), &aInfo_}, {QStringLiteral("b_"), &aInfo_}});
    QVERIFY(wizard.button(QWizard::NextButton)->isEnabled());
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("ab_ctx.onnx"))));  // built from the inputs
    QVERIFY(QDir(dir_.path()).entryList({QStringLiteral("merged*")}, QDir::Files).isEmpty());
    QTest::qWait(100);
    saveScreenshot(&wizard, QStringLiteral("merge_graph.png"));

    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::WritePage));
    QVERIFY(!wizard.button(QWizard::FinishButton)->isEnabled());  // nothing written yet
    const QString output = dir_.filePath(QStringLiteral("ab_ctx.onnx"));
    wizard.setOutputPath(output);
    QSignalSpy merged(&wizard, &MergeWizard::merged);
    wizard.write();
    QVERIFY(merged.wait(kTimeoutMs));
    QVERIFY2(wizard.lastError().isEmpty(), qPrintable(wizard.lastError()));
    QCOMPARE(merged.first().first().toString(), output);
    QVERIFY(QFile::exists(output));
    QVERIFY(QFile::exists(dir_.filePath(QStringLiteral("ab_vulkan.bin"))));
    QVERIFY(wizard.button(QWizard::FinishButton)->isEnabled());
    QVERIFY2(wizard.resultText().contains(QStringLiteral("deduplication saved")), qPrintable(wizard.resultText()));
    saveScreenshot(&wizard, QStringLiteral("merge_written.png"));
    // Finish offers to open the result.
    auto* open = wizard.findChild<QPushButton*>(QStringLiteral("openMergedButton"));
    QVERIFY(open && !open->isHidden());
    QSignalSpy openRequested(&wizard, &MergeWizard::openRequested);

    // The written model holds both prefixed node sets, exactly as the preview listed them.
    auto written = kiln::inspectEpContextModel(output.toStdString());
    QVERIFY2(written.isOk(), written.status().toString().c_str());
    std::set<std::string> expected;
    for (const auto& name : nodeNames(aInfo_)) {
      expected.insert("a_" + name);
      expected.insert("b_" + name);
    }
    QVERIFY(nodeNames(*written) == expected);
    std::set<std::string> previewed;
    for (const auto& node : preview.nodes) previewed.insert(node.name.toStdString());
    QVERIFY(previewed == expected);
    for (const auto& node : written->nodes) QVERIFY2(node.problem.empty(), node.problem.c_str());
    // Two identical models share every weight in the combined binary.
    QCOMPARE(wizard.outcome()->result.binary.weightBytesReferenced, 2 * wizard.outcome()->result.binary.weightBytes);
    open->click();
    QCOMPARE(openRequested.count(), 1);
    QCOMPARE(openRequested.first().first().toString(), output);
    QVERIFY(!wizard.isVisible());
  }

  void identicalPrefixesConflict() {
    MergeWizard wizard;
    wizard.show();
    wizard.addModel(aPath_, QStringLiteral("x_"));
    wizard.addModel(bPath_, QStringLiteral("x_"));
    QVERIFY(waitForModels(wizard));
    const kiln::bridge::MergePreview preview = wizard.preview();
    QVERIFY(!preview.ok());
    QVERIFY(preview.problems.isEmpty());
    const QString conflicts = preview.conflicts.join(QLatin1Char('\n'));
    QVERIFY2(conflicts.contains(QStringLiteral("node 'x_")), qPrintable(conflicts));
    QVERIFY2(conflicts.contains(QStringLiteral("value 'x_") + QString::fromStdString(aInfo_.inputs[0].name)),
             qPrintable(conflicts));
    QVERIFY2(conflicts.contains(QStringLiteral("graph 'x_")), qPrintable(conflicts));

    wizard.next();
    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::PreviewPage));
    QVERIFY(!wizard.button(QWizard::NextButton)->isEnabled());
    auto* list = wizard.findChild<QListWidget*>(QStringLiteral("conflictList"));
    QCOMPARE(list->count(), static_cast<int>(preview.conflicts.size()));
    QCOMPARE(list->item(0)->foreground().color(), QColor(0xc6, 0x28, 0x28));
    // The conflicting names are marked in the tables too.
    auto* nodes = wizard.findChild<QTableWidget*>(QStringLiteral("previewNodes"));
    QCOMPARE(nodes->item(0, 0)->foreground().color(), QColor(0xc6, 0x28, 0x28));
    QVERIFY(preview.conflictingNames.contains(nodes->item(0, 0)->text()));
    saveScreenshot(&wizard, QStringLiteral("merge_conflicts.png"));
    wizard.next();  // refused: the page is incomplete
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::PreviewPage));

    // Fixing a prefix (back on page 1) clears the conflicts and enables Next.
    wizard.setPrefix(1, QStringLiteral("y_"));
    QVERIFY(wizard.preview().ok());
    QVERIFY(wizard.button(QWizard::NextButton)->isEnabled());
  }

  void connectionsPreviewed() {
    MergeWizard wizard;
    wizard.addModel(aPath_, QStringLiteral("a_"));
    wizard.addModel(bPath_, QStringLiteral("b_"));
    QVERIFY(waitForModels(wizard));
    const QString aOut = QStringLiteral("a_") + QString::fromStdString(aInfo_.outputs[0].name);
    const QString bIn = QStringLiteral("b_") + QString::fromStdString(aInfo_.inputs[0].name);
    const QString aIn = QStringLiteral("a_") + QString::fromStdString(aInfo_.inputs[0].name);
    wizard.addConnection(aOut, bIn);
    kiln::bridge::MergePreview preview = wizard.preview();
    QVERIFY(preview.connectionErrors.isEmpty());
    for (const auto& input : preview.inputs) QVERIFY(input.name != bIn);  // fed by a_: no longer a graph input
    wizard.addConnection(aOut, aIn);
    preview = wizard.preview();
    QCOMPARE(preview.connectionErrors.size(), 1);
    QVERIFY(preview.connectionErrors[0].contains(QStringLiteral("same input model")));
    wizard.addConnection(QStringLiteral("a_nothing"), bIn);
    QVERIFY(wizard.preview().connectionErrors.last().contains(QStringLiteral("not an output")));
    wizard.removeConnection(2);
    wizard.removeConnection(1);
    QVERIFY(wizard.preview().ok());
  }

  // A connection is drawn as mergeEpContextModels writes it: an Identity from a_'s output to b_'s input, which is
  // no longer a graph input; the graph page of a plan with connections still shows both EPContext nodes.
  void graphShowsConnections() {
    MergeWizard wizard;
    wizard.show();
    wizard.addModel(aPath_, QStringLiteral("a_"));
    wizard.addModel(bPath_, QStringLiteral("b_"));
    QVERIFY(waitForModels(wizard));
    const QString aOut = QStringLiteral("a_") + QString::fromStdString(aInfo_.outputs[0].name);
    const QString bIn = QStringLiteral("b_") + QString::fromStdString(aInfo_.inputs[0].name);
    wizard.addConnection(aOut, bIn);
    QSignalSpy graphReady(&wizard, &MergeWizard::graphPreviewReady);
    wizard.next();
    wizard.next();
    wizard.next();
    QCOMPARE(wizard.currentId(), static_cast<int>(MergeWizard::GraphPage));
    QVERIFY(graphReady.count() > 0 || graphReady.wait(kTimeoutMs));
    checkMergedGraph(wizard, {{QStringLiteral("a_"), &aInfo_}, {QStringLiteral("b_"), &aInfo_}});
    const auto document = wizard.mergedGraph();
    int identity = -1, aNode = -1, bNode = -1;
    for (int i = 0; i < document->nodes().size(); ++i) {
      const auto& node = document->nodes()[i];
      QVERIFY2(!(node.kind == kiln::bridge::GraphNode::Kind::GraphInput && node.name == bIn), "b_'s input is fed");
      if (node.opType == QLatin1String("Identity")) identity = i;
      if (node.epContext && node.name.startsWith(QLatin1String("a_"))) aNode = i;
      if (node.epContext && node.name.startsWith(QLatin1String("b_"))) bNode = i;
    }
    QVERIFY(identity >= 0 && aNode >= 0 && bNode >= 0);
    QCOMPARE(document->nodes()[identity].name, QStringLiteral("connect_%1_to_%2").arg(aOut, bIn));
    QCOMPARE(document->nodes()[identity].executionProvider, QStringLiteral("CPUExecutionProvider"));
    bool fromA = false, toB = false;
    for (const auto& edge : document->edges()) {
      fromA |= edge.from == aNode && edge.to == identity && edge.value == aOut;
      toB |= edge.from == identity && edge.to == bNode && edge.value == bIn;
    }
    QVERIFY(fromA && toB);
  }

  // Fewer than two readable inputs: no merged graph, and the page says why instead of drawing half a model.
  void graphNeedsTwoReadableModels() {
    QList<kiln::bridge::MergeModelEntry> entries;
    entries << kiln::bridge::MergeModelEntry{aPath_, QStringLiteral("a_"), std::make_shared<const kiln::EpContextModelInfo>(aInfo_), {}};
    QVERIFY(!kiln::bridge::mergedGraphDocument(entries, {}));
    entries << kiln::bridge::MergeModelEntry{tinyCnnPath(), QStringLiteral("t_"), nullptr, QStringLiteral("no EPContext node")};
    QVERIFY(!kiln::bridge::mergedGraphDocument(entries, {}));
    entries << kiln::bridge::MergeModelEntry{bPath_, QStringLiteral("b_"), std::make_shared<const kiln::EpContextModelInfo>(aInfo_), {}};
    QVERIFY(kiln::bridge::mergedGraphDocument(entries, {}));
  }

  void outputOverInputRefused() {
    const QByteArray ctxBefore = fileBytes(aPath_);
    const QByteArray binBefore = fileBytes(dir_.filePath(QStringLiteral("a_vulkan.bin")));
    const QStringList filesBefore = QDir(dir_.path()).entryList(QDir::Files, QDir::Name);
    MergeWizard wizard;
    wizard.addModel(aPath_, QStringLiteral("a_"));
    wizard.addModel(bPath_, QStringLiteral("b_"));
    QVERIFY(waitForModels(wizard));
    wizard.setOutputPath(aPath_);
    QSignalSpy failed(&wizard, &MergeWizard::mergeFailed);
    QSignalSpy merged(&wizard, &MergeWizard::merged);
    wizard.write();
    QVERIFY(failed.wait(kTimeoutMs));
    QCOMPARE(merged.count(), 0);
    QVERIFY(wizard.findChild<QPushButton*>(QStringLiteral("openMergedButton"))->isHidden());
    QVERIFY2(wizard.lastError().startsWith(QStringLiteral("INVALID_ARGUMENT")), qPrintable(wizard.lastError()));
    QVERIFY(wizard.resultText().contains(wizard.lastError()));
    QVERIFY(!wizard.outcome().has_value());
    QCOMPARE(fileBytes(aPath_), ctxBefore);
    QCOMPARE(fileBytes(dir_.filePath(QStringLiteral("a_vulkan.bin"))), binBefore);
    QCOMPARE(QDir(dir_.path()).entryList(QDir::Files, QDir::Name), filesBefore);  // no temporary left behind
  }

  void unreadableModelBlocksPageOne() {
    MergeWizard wizard;
    wizard.show();
    wizard.addModel(aPath_);
    wizard.addModel(tinyCnnPath());  // a plain model: nothing to merge
    QVERIFY(waitForModels(wizard));
    QVERIFY(!wizard.models()[1].error.isEmpty());
    QVERIFY(!wizard.preview().problems.isEmpty());
    QVERIFY(!wizard.button(QWizard::NextButton)->isEnabled());
    wizard.removeModel(1);
    wizard.addModel(bPath_);
    QVERIFY(waitForModels(wizard));
    QVERIFY(wizard.button(QWizard::NextButton)->isEnabled());
  }

 private:
  QTemporaryDir dir_;
  QString aPath_, bPath_;
  kiln::EpContextModelInfo aInfo_;
};

QTEST_MAIN(TestMergeWizard)
#include "tst_merge_wizard.moc"
