// Source ↔ compiled (issue 22, item 4): with a compiled model beside its source, selecting an EPContext node
// highlights the source nodes it replaced (the partition report's node list) and selecting a source node highlights
// the EPContext node that replaced it; the compiled graph labels host↔device transfers with their sizes.
#include <QFile>
#include <QGraphicsItem>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "kiln/compiler.h"
#include "log_hub.h"
#include "main_window.h"
#include "model_summary_view.h"
#include "requirements.h"
#include "source_compiled_link.h"
#include "source_compiled_links.h"
#include "studio_test_files.h"

using kiln::bridge::BorderTransfer;
using kiln::bridge::GraphDocument;
using kiln::studio::GraphPanel;
using kiln::studio::SourceCompiledLink;
using kiln::testing::openAndWait;

class TestSourceCompiled : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_source_compiled"));
  }

  void labelsSayDirectionAndSize() {
    QCOMPARE((BorderTransfer{0, 1, QStringLiteral("x"), true, 1024}.label()), QStringLiteral("H→D 1.00 KiB"));
    QCOMPARE((BorderTransfer{0, 1, QStringLiteral("x"), false, -1}.label()), QStringLiteral("D→H (size unknown)"));
  }

  void selectionHighlightsTheCounterpart() {
    QTemporaryDir dir;
    const QString ctx = dir.filePath(QStringLiteral("sample_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(KILN_PARTITION_SAMPLE).setOutputModelPath(ctx.toStdString());
    const auto compiled = kiln::compileModel(options);
    if (!compiled.isOk()) {
      if (kiln::testing::vulkanRequired()) QFAIL(compiled.status().toString().c_str());
      QSKIP(qPrintable(QStringLiteral("cannot compile: ") + QString::fromStdString(compiled.status().toString())));
    }
    GraphPanel source, target;
    source.resize(900, 700);
    target.resize(900, 700);
    source.show();  // the link stays quiet while either panel is hidden (no compiled model beside the source)
    target.show();
    SourceCompiledLink link(&source, &target);
    QVERIFY(openAndWait(source, QStringLiteral(KILN_PARTITION_SAMPLE)));
    QVERIFY(openAndWait(target, ctx));
    const GraphDocument& src = *source.document();
    const GraphDocument& dst = *target.document();

    // Every EPContext node maps to exactly the nodes of the source partition its partition_name names.
    int epNodes = 0;
    for (int i = 0; i < dst.nodes().size(); ++i) {
      const auto& n = dst.nodes()[i];
      if (!n.epContext) {
        QVERIFY(kiln::bridge::replacedSourceNodes(src, dst, i).isEmpty());
        continue;
      }
      ++epNodes;
      const int cluster = src.findCluster(n.epContextDetails->partitionName);
      QVERIFY2(cluster >= 0, qPrintable(n.epContextDetails->partitionName));
      const QVector<int> replaced = kiln::bridge::replacedSourceNodes(src, dst, i);
      QCOMPARE(replaced, src.clusters()[cluster].nodes);
      for (int s : replaced) QCOMPARE(kiln::bridge::replacingEpContextNode(src, s, dst), i);

      // Selecting it in the compiled view highlights those source nodes.
      target.view()->focusNode(i);
      QCOMPARE(link.sourceHighlight(), replaced);
      for (int s : replaced) {
        if (auto* item = source.view()->nodeItem(s)) QVERIFY(item->isHighlighted());
      }
      // And back: selecting the first of them highlights this EPContext node.
      source.view()->focusNode(replaced.first());
      QCOMPARE(link.compiledHighlight(), QVector<int>{i});
      QVERIFY(target.view()->nodeItem(i)->isHighlighted());
    }
    QVERIFY(epNodes > 0);
    // A source node that stayed on the CPU has no EPContext counterpart; nor has a node index out of range.
    for (int s = 0; s < src.nodes().size(); ++s) {
      const int c = src.clusterOf(s);
      if (c >= 0 && !src.clusters()[c].compiled) QCOMPARE(kiln::bridge::replacingEpContextNode(src, s, dst), -1);
    }
    QVERIFY(kiln::bridge::replacedSourceNodes(src, dst, -1).isEmpty());
    QVERIFY(kiln::bridge::replacedSourceNodes(src, dst, 100000).isEmpty());

    // Transfers: values entering and leaving the compiled partitions, sized from their shapes, badged on the graph.
    const QVector<BorderTransfer> transfers = kiln::bridge::borderTransfers(dst);
    QVERIFY(!transfers.isEmpty());
    bool in = false, out = false;
    for (const BorderTransfer& t : transfers) {
      in = in || t.toDevice;
      out = out || !t.toDevice;
      QCOMPARE(t.bytes, kiln::bridge::valueBytes(dst.modelInfo(), t.value));
      QVERIFY(t.label().endsWith(t.bytes >= 0 ? QStringLiteral("B") : QStringLiteral("(size unknown)")));
    }
    QVERIFY(in && out);
    int badges = 0;
    for (QGraphicsItem* item : target.scene()->items()) badges += item->toolTip().startsWith(QStringLiteral("Host↔device"));
    QVERIFY(badges > 0);
    // The source model has no EPContext node: no transfer badges there.
    QVERIFY(kiln::bridge::borderTransfers(src).isEmpty());
    QCOMPARE(kiln::bridge::valueBytes(dst.modelInfo(), QStringLiteral("no such value")), int64_t{-1});
  }

  // An EPContext node inside an If body: the source panel, showing the main graph, opens that body and highlights
  // the partition's nodes there; selecting one of them (in the body) finds the EPContext node in the compiled body.
  void counterpartInAnotherGraphOpensIt() {
    QTemporaryDir dir;
    KILN_COMPILE_IF_MODEL(compiled, dir.path(), QStringLiteral("if_ctx.onnx"), false);
    const QString& model = compiled.source;
    const QString& ctx = compiled.ctx;
    GraphPanel source, target;
    source.resize(900, 700);
    target.resize(900, 700);
    source.show();
    target.show();
    SourceCompiledLink link(&source, &target);
    QVERIFY(openAndWait(source, model));
    QVERIFY(openAndWait(target, ctx));
    // The first body of the compiled model holding an EPContext node.
    QString body;
    int epNode = -1;
    for (const QString& path : target.rootDocument()->bodyPaths()) {
      const auto doc = target.rootDocument()->body(path);
      for (int i = 0; i < doc->nodes().size() && epNode < 0; ++i) {
        if (doc->nodes()[i].epContext) epNode = i;
      }
      if (epNode >= 0) {
        body = path;
        break;
      }
    }
    QVERIFY(epNode >= 0);
    {
      QSignalSpy ready(&target, &GraphPanel::layoutReady);
      QVERIFY(target.openGraph(body));
      QVERIFY(ready.wait(60000));
    }
    QCOMPARE(source.currentGraphPath(), QString::fromLatin1(GraphDocument::kMainPath));
    QSignalSpy sourceReady(&source, &GraphPanel::layoutReady);
    target.view()->focusNode(epNode);
    QVERIFY(sourceReady.wait(60000));
    QCOMPARE(source.currentGraphPath(), body);
    const auto expected = kiln::bridge::replacedSourceNodes(*source.document(), *target.document(), epNode);
    QVERIFY(!expected.isEmpty());
    QCOMPARE(link.sourceHighlight(), expected);
    // And back, within the same body.
    source.view()->focusNode(expected.first());
    QCOMPARE(link.compiledHighlight(), QVector<int>{epNode});
    // The bridge finds it from the main documents as well.
    const auto found = kiln::bridge::findReplacedSourceNodes(*source.rootDocument(), *target.document(), epNode);
    QCOMPARE(found.graphPath, body);
    QCOMPARE(found.nodes, expected);
  }

  // A ctx model opened by itself leads back to its source (issue 33, item 7): the summary names the source its compile
  // record gives and opens it with the ctx model beside it; a moved ctx model says its source is not found; a source
  // changed since the compile is called stale.
  void ctxModelOpenedAloneLeadsBackToItsSource() {
    QTemporaryDir dir;
    KILN_COMPILE_IF_MODEL(compiled, dir.path(), QStringLiteral("if_ctx.onnx"), false);
    const QString& model = compiled.source;
    const QString& ctx = compiled.ctx;
    kiln::studio::MainWindow window;
    window.resize(1400, 800);
    auto* summary = window.findChild<kiln::studio::ModelSummaryView*>();
    QVERIFY(summary);
    QVERIFY(openInWindow(window, ctx));
    QTRY_COMPARE(summary->valueOf(QStringLiteral("Model"), QStringLiteral("Compiled from")), QStringLiteral("if_model.onnx"));
    auto* button = summary->findChild<QPushButton*>(QStringLiteral("openSourceButton"));
    QVERIFY(button);
    kiln::testing::saveScreenshot(&window, QStringLiteral("ctx-model-names-its-source.png"));
    {
      QSignalSpy compiledReady(window.compiledGraphPanel(), &GraphPanel::layoutReady);
      button->click();
      QVERIFY(compiledReady.wait(60000));
    }
    QCOMPARE(QString::fromStdString(window.graphPanel()->rootDocument()->modelInfo().path), model);
    QVERIFY(!window.compiledGraphPanel()->isHidden());
    QCOMPARE(QString::fromStdString(window.compiledGraphPanel()->rootDocument()->modelInfo().path), ctx);
    kiln::testing::saveScreenshot(&window, QStringLiteral("source-opened-beside-its-ctx-model.png"));
    QVERIFY2(!window.statusBar()->currentMessage().contains(QStringLiteral("stale")),
             qPrintable(window.statusBar()->currentMessage()));

    // Moved away from its source: the row says the source is not found, and offers nothing to open.
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("moved")));
    const QString moved = dir.filePath(QStringLiteral("moved/if_ctx.onnx"));
    QVERIFY(QFile::copy(ctx, moved));
    QVERIFY(QFile::copy(compiled.binary, dir.filePath(QStringLiteral("moved/") + QFileInfo(compiled.binary).fileName())));
    QVERIFY(openInWindow(window, moved));
    QTRY_COMPARE(summary->valueOf(QStringLiteral("Model"), QStringLiteral("Compiled from")),
                 QStringLiteral("if_model.onnx (not found)"));
    QTRY_VERIFY(!summary->findChild<QPushButton*>(QStringLiteral("openSourceButton")));

    // The source changed after the compile: opened beside it, the ctx model is called stale.
    QFile source(model);
    QVERIFY(source.open(QIODevice::Append));
    source.write(QByteArray::fromHex("720a0a016b1205636861676e"));  // a metadata_props entry: other bytes, same graph
    source.close();
    QVERIFY(openInWindow(window, ctx));
    QTRY_VERIFY(summary->findChild<QPushButton*>(QStringLiteral("openSourceButton")));
    {
      QSignalSpy compiledReady(window.compiledGraphPanel(), &GraphPanel::layoutReady);
      summary->findChild<QPushButton*>(QStringLiteral("openSourceButton"))->click();
      QVERIFY(compiledReady.wait(60000));
    }
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("stale")),
             qPrintable(window.statusBar()->currentMessage()));
  }

 private:
  // Opens `path` in `window` and waits for both the model (summary, tables) and its graph.
  static bool openInWindow(kiln::studio::MainWindow& window, const QString& path) {
    QSignalSpy loaded(&window, &kiln::studio::MainWindow::modelLoaded);
    if (!kiln::testing::waitForLayout(*window.graphPanel(), [&] { window.openModel(path); })) return false;
    return !loaded.isEmpty() || loaded.wait(60000);
  }
};

QTEST_MAIN(TestSourceCompiled)
#include "tst_source_compiled.moc"
