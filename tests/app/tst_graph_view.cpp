// The graph view: partition colors against the engine's own analyzePartitions, CPU-fallback reasons, EPContext
// nodes and their decoded details, search, collapsing partitions, export, and cancelling a running dot.
#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QUrl>
#include <QtTest>

#include <map>

#include "graph_layout.h"
#include "graph_loader.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "kiln/compiler.h"
#include "kiln/partition_report.h"
#include "node_details_view.h"
#include "requirements.h"

using kiln::bridge::GraphDocument;
using kiln::bridge::GraphNode;
using kiln::studio::GraphPanel;

namespace {

const QString kTinyCnn = QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx");
const QString kPartitionSample = QStringLiteral(KILN_PARTITION_SAMPLE);
const QString kVulkanEp = QStringLiteral("VulkanExecutionProvider");
const QString kCpuEp = QStringLiteral("CPUExecutionProvider");

using kiln::testing::nodeNamed;
using kiln::testing::vulkanRequired;
using kiln::testing::waitForLayout;

// Opens `path` and waits for the first layout.
bool openAndWait(GraphPanel& panel, const QString& path) {
  QSignalSpy ready(&panel, &GraphPanel::layoutReady);
  QSignalSpy failed(&panel, &GraphPanel::failed);
  panel.openModel(path);
  if (!ready.wait(90000)) {
    qWarning() << "no layout for" << path << failed << panel.statusText();
    return false;
  }
  return true;
}

QString detailsText(GraphPanel& panel) { return panel.detailsView()->text(); }

// Vulkan, CPU and "no EP" must be told apart at a glance.
bool bridgeColorsDiffer() {
  using namespace kiln::bridge;
  return epColor(QStringLiteral("VulkanExecutionProvider")) != epColor(QStringLiteral("CPUExecutionProvider")) &&
         epColor(QStringLiteral("CPUExecutionProvider")) != epColor(QString()) &&
         epColor(QStringLiteral("VulkanExecutionProvider")) != epColor(QString());
}

}  // namespace

class TestGraphView : public QObject {
  Q_OBJECT

 private slots:
  void partitionColorsMatchEngine();
  void cpuFallbackCarriesReason();
  void epContextNodesAreDistinct_data();
  void epContextNodesAreDistinct();
  void searchFindsOpType();
  void collapseAndExpandPartition();
  void exportSvgAndPng();
  void cancelWhileDotRuns();
  void cancelWhileLoading();
  void missingModelFails();
};

void TestGraphView::partitionColorsMatchEngine() {
  // The engine's own answer, asked directly.
  const auto report = kiln::analyzePartitions(kTinyCnn.toStdString(), kiln::bridge::GraphLoader::partitionOptions());
  QVERIFY2(report.isOk(), report.status().toString().c_str());
  std::map<QString, QString> expected;  // label -> EP
  for (const auto& graph : report.value().graphs) {
    if (graph.path != "main") continue;
    for (const auto& n : graph.nodes) {
      expected[QString::fromStdString(n.node)] = QString::fromStdString(n.executionProvider);
    }
  }
  QVERIFY(!expected.empty());

  GraphPanel panel;
  panel.resize(1000, 700);
  QVERIFY(openAndWait(panel, kTinyCnn));
  const auto doc = panel.document();
  QVERIFY(doc);
  QCOMPARE(doc->opNodeCount(), 13);
  QVERIFY(bridgeColorsDiffer());
  int checked = 0, vulkanNodes = 0;
  for (auto* item : panel.view()->nodeItems()) {
    const GraphNode& node = doc->nodes()[item->nodeIndex()];
    if (node.kind != GraphNode::Kind::Op) continue;
    QVERIFY2(expected.count(node.label), qPrintable(node.label));
    const QString ep = expected[node.label];
    QCOMPARE(node.executionProvider, ep);
    QCOMPARE(item->fillColor(), kiln::studio::epQColor(ep));
    if (ep == kVulkanEp) ++vulkanNodes;
    ++checked;
  }
  QCOMPARE(checked, 13);
  const bool vulkan = doc->executionProviders().contains(kVulkanEp);
  if (!vulkan && vulkanRequired()) QFAIL("KILN_REQUIRE_VULKAN=1 but the partition report has no Vulkan EP");
  if (vulkan) {
    QCOMPARE(vulkanNodes, 13);  // tiny_cnn runs whole on the Vulkan EP
    QCOMPARE(kiln::studio::epQColor(kVulkanEp), QColor::fromRgb(kiln::bridge::ep_colors::kVulkan));
    // The partition is drawn as an expanded cluster box behind its nodes (13 nodes: not collapsed by default).
    QCOMPARE(doc->clusters().size(), 1);
    QVERIFY(panel.view()->clusterItem(0));
    QVERIFY(!panel.view()->clusterItem(0)->isCollapsed());
  }
  QVERIFY(panel.statusText().contains(QStringLiteral("laid out in")));
}

void TestGraphView::cpuFallbackCarriesReason() {
  GraphPanel panel;
  panel.resize(1000, 700);
  QVERIFY(openAndWait(panel, kPartitionSample));
  const auto doc = panel.document();
  if (!doc->executionProviders().contains(kVulkanEp)) {
    if (vulkanRequired()) QFAIL("KILN_REQUIRE_VULKAN=1 but no Vulkan EP");
    QSKIP("no Vulkan device: nothing falls back");
  }
  const int branch = nodeNamed(*doc, QStringLiteral("branch"));
  QVERIFY(branch >= 0);
  const GraphNode& node = doc->nodes()[branch];
  QCOMPARE(node.executionProvider, kCpuEp);
  // Control flow runs on the CPU by design (issue 22): its reason is kept, but it is no fallback warning.
  QVERIFY(node.isControlFlow());
  QVERIFY(!node.cpuFallback());
  QVERIFY2(node.fallbackReasons.first().startsWith(QStringLiteral("VulkanExecutionProvider: control-flow node")),
           qPrintable(node.fallbackReasons.first()));
  auto* item = panel.view()->nodeItem(branch);
  QVERIFY(item);
  QVERIFY(!item->isCpuFallback());
  QCOMPARE(item->fillColor(), kiln::studio::epQColor(kCpuEp));
  QVERIFY(item->toolTip().contains(QStringLiteral("on the CPU by design: VulkanExecutionProvider: control-flow node")));
  // Nodes the other way round carry no reason.
  const int mul = nodeNamed(*doc, QStringLiteral("mul"));
  QVERIFY(!doc->nodes()[mul].cpuFallback());
  QCOMPARE(doc->nodes()[mul].executionProvider, kVulkanEp);
  // What the optimizer removed is marked, not colored as if it ran.
  const int dead = nodeNamed(*doc, QStringLiteral("dead_relu"));
  QVERIFY(doc->nodes()[dead].removedByOptimizer);
  QVERIFY(doc->nodes()[dead].executionProvider.isEmpty());
  const int folded = nodeNamed(*doc, QStringLiteral("scale_const"));
  QCOMPARE(doc->nodes()[folded].optimizerNote, QStringLiteral("folded into initializer 'scale'"));

  // The details view tells the reason and the node's inputs with types.
  panel.selectNode(branch);
  const QString text = detailsText(panel);
  QVERIFY2(text.contains(QStringLiteral("On the CPU by design")), qPrintable(text));
  QVERIFY2(!text.contains(QStringLiteral("CPU fallback")), qPrintable(text));
  QVERIFY(text.contains(QStringLiteral("control-flow node")));
  QVERIFY(text.contains(QStringLiteral("then_branch")));  // attribute values: graph 'then' (2 nodes)
  QVERIFY(text.contains(QStringLiteral("graph 'then'")));
  panel.selectNode(mul);
  QVERIFY2(detailsText(panel).contains(QStringLiteral("float32[1,4]")), qPrintable(detailsText(panel)));
}

void TestGraphView::epContextNodesAreDistinct_data() {
  QTest::addColumn<bool>("embed");
  QTest::newRow("binary file") << false;
  QTest::newRow("embedded") << true;
}

void TestGraphView::epContextNodesAreDistinct() {
  QFETCH(bool, embed);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString ctxPath = dir.filePath(QStringLiteral("tiny_ctx.onnx"));
  kiln::ModelCompilationOptions options;
  options.setInputModelPath(kTinyCnn.toStdString()).setOutputModelPath(ctxPath.toStdString()).setEpContextEmbedMode(embed);
  const auto compiled = kiln::compileModel(options);
  if (!compiled.isOk()) {
    if (vulkanRequired()) QFAIL(compiled.status().toString().c_str());
    QSKIP(qPrintable(QStringLiteral("cannot compile: ") + QString::fromStdString(compiled.status().toString())));
  }
  QVERIFY(compiled.value().epContextNodes >= 1);

  GraphPanel panel;
  panel.resize(1000, 700);
  QSignalSpy inspect(&panel, &GraphPanel::inspectBinaryRequested);
  QVERIFY(openAndWait(panel, ctxPath));
  const auto doc = panel.document();
  // A compiled model is partitioned by the engine's report of its EPContext nodes (analyzePartitions): no error,
  // and the node sits in the compiled partition its partition_name names.
  QVERIFY2(doc->partitionError().isEmpty(), qPrintable(doc->partitionError()));
  QVERIFY(std::any_of(doc->clusters().begin(), doc->clusters().end(),
                      [](const auto& cluster) { return cluster.name == QStringLiteral("vulkan_0"); }));
  int ctxNode = -1;
  for (int i = 0; i < doc->nodes().size(); ++i) {
    auto* item = panel.view()->nodeItem(i);
    QVERIFY(item);
    QCOMPARE(item->isEpContext(), doc->nodes()[i].epContext);
    if (doc->nodes()[i].epContext) ctxNode = i;
  }
  QVERIFY(ctxNode >= 0);
  const GraphNode& node = doc->nodes()[ctxNode];
  QVERIFY(node.epContextDetails.has_value());
  QCOMPARE(node.epContextDetails->embedMode, embed ? 1 : 0);
  QCOMPARE(node.epContextDetails->partitionName, QStringLiteral("vulkan_0"));
  QVERIFY(node.epContextDetails->binarySize > 0);
  QCOMPARE(panel.view()->nodeItem(ctxNode)->fillColor(), kiln::studio::epQColor(kVulkanEp));

  panel.selectNode(ctxNode);
  const QString text = detailsText(panel);
  // Table rows read "key\nvalue" as plain text.
  QVERIFY2(text.contains(QStringLiteral("embed_mode\n%1 (").arg(embed ? 1 : 0)), qPrintable(text));
  QVERIFY(text.contains(QStringLiteral("partition_name\nvulkan_0")));
  QVERIFY(text.contains(QStringLiteral("binary size")));
  QVERIFY(text.contains(QStringLiteral("main_context")));
  // Never the payload: the details stay short and printable whatever the binary holds.
  QVERIFY2(text.size() < 3000, qPrintable(QString::number(text.size())));
  for (QChar c : text) QVERIFY2(c.isPrint() || c.isSpace(), qPrintable(QStringLiteral("U+%1").arg(c.unicode(), 4, 16)));
  // The engine's attribute strings keep the payload out too.
  const auto& attributes = doc->modelInfo().nodes[static_cast<size_t>(node.modelIndex)].attributes;
  for (const auto& [key, value] : attributes) {
    if (key == "ep_cache_context" && embed) QVERIFY2(value.front() == '<', value.c_str());
    QVERIFY(value.size() < 200);
  }
  if (embed) {
    QVERIFY(text.contains(QStringLiteral("(embedded, ")));
    QVERIFY(panel.detailsView()->binaryLink().isEmpty());
  } else {
    QVERIFY(text.contains(QStringLiteral("tiny_vulkan.bin")));
    QVERIFY(text.contains(QStringLiteral("Inspect binary")));
    QVERIFY(QFile::exists(panel.detailsView()->binaryLink()));
    auto* browser = panel.detailsView()->findChild<QTextBrowser*>();
    QVERIFY(browser);
    emit browser->anchorClicked(QUrl(QStringLiteral("kiln-inspect:binary")));
    QCOMPARE(inspect.size(), 1);
    QCOMPARE(inspect.first().first().toString(), panel.detailsView()->binaryLink());
  }
}

void TestGraphView::searchFindsOpType() {
  GraphPanel panel;
  panel.resize(1000, 700);
  QVERIFY(openAndWait(panel, kTinyCnn));
  QSignalSpy selected(&panel, &GraphPanel::nodeSelected);
  QCOMPARE(panel.search(QStringLiteral("HardSigmoid")), 1);
  QCOMPARE(selected.size(), 1);
  QCOMPARE(selected.first().first().toString(), QStringLiteral("gate"));
  QCOMPARE(panel.search(QStringLiteral("conv")), 3);  // conv1, depthwise, pointwise: op type Conv
  int highlighted = 0;
  for (auto* item : panel.view()->nodeItems()) highlighted += item->isHighlighted() ? 1 : 0;
  QCOMPARE(highlighted, 3);
  panel.findNext();
  QCOMPARE(selected.last().first().toString(), QStringLiteral("depthwise"));
  panel.findPrevious();
  QCOMPARE(selected.last().first().toString(), QStringLiteral("conv1"));
  QCOMPARE(panel.search(QStringLiteral("no-such-node")), 0);
}

void TestGraphView::collapseAndExpandPartition() {
  GraphPanel panel;
  panel.resize(1000, 700);
  QVERIFY(openAndWait(panel, kPartitionSample));
  const auto doc = panel.document();
  QVERIFY(!doc->clusters().isEmpty());
  const int cluster = 0;
  const QVector<int> members = doc->clusters()[cluster].nodes;
  QVERIFY(!members.isEmpty());
  QVERIFY(panel.view()->nodeItem(members.first()));
  QVERIFY(waitForLayout(panel, [&] { panel.setClusterCollapsed(cluster, true); }));
  QVERIFY(panel.isClusterCollapsed(cluster));
  QVERIFY(panel.view()->clusterItem(cluster)->isCollapsed());
  for (int n : members) QVERIFY(!panel.view()->nodeItem(n));
  QCOMPARE(panel.view()->clusterItem(cluster)->fillColor(),
           kiln::studio::epQColor(doc->clusters()[cluster].executionProvider));
  // Searching for a node inside the collapsed partition opens it.
  QVERIFY(waitForLayout(panel, [&] { panel.search(doc->nodes()[members.first()].name); }));
  QVERIFY(!panel.isClusterCollapsed(cluster));
  QVERIFY(panel.view()->nodeItem(members.first())->isSelected());
  QVERIFY(waitForLayout(panel, [&] { panel.collapseAll(); }));
  for (int c = 0; c < doc->clusters().size(); ++c) QVERIFY(panel.isClusterCollapsed(c));
  QVERIFY(waitForLayout(panel, [&] { panel.expandAll(); }));
  for (int n : members) QVERIFY(panel.view()->nodeItem(n));
}

void TestGraphView::exportSvgAndPng() {
  GraphPanel panel;
  panel.resize(1000, 700);
  QVERIFY(openAndWait(panel, kTinyCnn));
  QTemporaryDir dir;
  QString error;
  const QString svg = dir.filePath(QStringLiteral("graph.svg"));
  QVERIFY2(panel.exportSvg(svg, &error), qPrintable(error));
  QSvgRenderer renderer(svg);
  QVERIFY(renderer.isValid());
  QVERIFY(QFileInfo(svg).size() > 1000);
  const QString png = dir.filePath(QStringLiteral("graph.png"));
  QVERIFY2(panel.exportPng(png, &error), qPrintable(error));
  const QImage image(png);
  QVERIFY(!image.isNull());
  QVERIFY(image.width() > 100 && image.height() > 100);
  // The Vulkan (or CPU) node color is in the picture.
  bool found = false;
  const QColor ep = panel.view()->nodeItems().begin().value()->fillColor();
  for (int y = 0; y < image.height() && !found; y += 2) {
    for (int x = 0; x < image.width() && !found; x += 2) found = image.pixelColor(x, y).rgb() == ep.rgb();
  }
  QVERIFY(found);
  // A folder that does not exist: an error, no file.
  QVERIFY(!panel.exportPng(dir.filePath(QStringLiteral("missing/graph.png")), &error));
  QVERIFY(!error.isEmpty());
}

void TestGraphView::cancelWhileDotRuns() {
  // A 3000-node chain with skip edges keeps dot busy for seconds.
  GraphDocument empty;
  kiln::bridge::VisibleGraph graph;
  for (int i = 0; i < 3000; ++i) {
    kiln::bridge::VisibleGraph::Vertex v;
    v.id = QStringLiteral("n%1").arg(i);
    graph.vertices.push_back(v);
    if (i > 0) graph.edges.push_back({i - 1, i, 1});
    if (i > 7) graph.edges.push_back({i - 7, i, 1});
  }
  kiln::bridge::GraphLayout layout;
  QSignalSpy finished(&layout, &kiln::bridge::GraphLayout::finished);
  QSignalSpy failed(&layout, &kiln::bridge::GraphLayout::failed);
  layout.start(graph, empty);
  QTest::qWait(300);
  QVERIFY(layout.isRunning());
  layout.cancel();
  QVERIFY(!layout.isRunning());
  QTest::qWait(1500);
  QCOMPARE(finished.size(), 0);
  QCOMPARE(failed.size(), 0);
  // The same object lays out again afterwards.
  kiln::bridge::VisibleGraph small;
  small.vertices = graph.vertices.mid(0, 3);
  small.edges = {{0, 1, 1}, {1, 2, 1}};
  layout.start(small, empty);
  QVERIFY(finished.wait(20000));
  const auto result = finished.first().first().value<kiln::bridge::GraphLayoutResult>();
  QCOMPARE(result.vertices.size(), 3);
  QVERIFY(result.vertices[0].center().y() < result.vertices[2].center().y());  // top to bottom
  QCOMPARE(result.edgeSplines.size(), 2);
  QVERIFY(result.edgeSplines[0].size() >= 4);
}

void TestGraphView::cancelWhileLoading() {
  GraphPanel panel;
  QSignalSpy ready(&panel, &GraphPanel::layoutReady);
  QSignalSpy failed(&panel, &GraphPanel::failed);
  panel.openModel(kTinyCnn);
  panel.cancel();
  QVERIFY(!panel.isBusy());
  QTest::qWait(2000);
  QCOMPARE(ready.size(), 0);
  QCOMPARE(failed.size(), 0);
  QVERIFY(panel.scene()->items().isEmpty());
}

void TestGraphView::missingModelFails() {
  GraphPanel panel;
  QSignalSpy failed(&panel, &GraphPanel::failed);
  panel.openModel(QStringLiteral("/nonexistent/model.onnx"));
  QVERIFY(failed.wait(20000));
  QVERIFY2(failed.first().first().toString().contains(QStringLiteral("NO_SUCHFILE")),
           qPrintable(failed.first().first().toString()));
}

QTEST_MAIN(TestGraphView)
#include "tst_graph_view.moc"
