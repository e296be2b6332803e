// Per-node data is bound to the model it came from (issue 33, item 3): a profile or comparison of another model
// is never painted on the graph on display, even when its node names match, and "Show first divergence" says why
// instead of doing nothing; data of the model itself colours it; data that names no model (older files) is
// matched by node name with a note; a ctx model and its source take each other's data by name.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "compare_panel.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "kiln/model_info.h"
#include "log_hub.h"
#include "main_window.h"
#include "node_overlay.h"
#include "overlay_binding.h"
#include "studio_test_files.h"
#include "theme.h"

using kiln::bridge::OverlayMatch;
using kiln::studio::MainWindow;
using kiln::studio::NodeOverlay;
using kiln::studio::OverlayLegend;

namespace {

constexpr int kLoadTimeoutMs = 60000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

// A copy of tiny_cnn.onnx with other bytes but the same graph: one metadata_props entry appended (a serialized
// ModelProto field 14; protobuf merges fields appended to a message).
bool writeTwinWithOtherBytes(const QString& path) {
  QFile source(tinyCnnPath());
  if (!source.open(QIODevice::ReadOnly)) return false;
  QByteArray bytes = source.readAll();
  const QByteArray key("note"), value("another model with the same node names");
  QByteArray entry;
  entry += char(0x0a) + QByteArray(1, char(key.size())) + key;
  entry += char(0x12) + QByteArray(1, char(value.size())) + value;
  bytes += char(0x72) + QByteArray(1, char(entry.size())) + entry;
  QFile out(path);
  return out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size();
}

kiln::bridge::NodeMetrics dataOf(const QString& model, const QString& hash, const QString& sourceHash = {}) {
  kiln::bridge::NodeMetrics data;
  data.kind = QStringLiteral("compare");
  data.model = model;
  data.modelHash = hash;
  data.modelSourceHash = sourceHash;
  return data;
}

}  // namespace

class TestOverlayBinding : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_overlay_binding"));
    other_ = dir_.filePath(QStringLiteral("other.onnx"));
    QVERIFY(writeTwinWithOtherBytes(other_));
  }

  void identityTellsModelsWithTheSameGraphApart() {
    auto mine = kiln::identifyModel(tinyCnnPath().toStdString());
    auto theirs = kiln::identifyModel(other_.toStdString());
    QVERIFY2(mine.isOk(), mine.isOk() ? "" : mine.status().toString().c_str());
    QVERIFY2(theirs.isOk(), theirs.isOk() ? "" : theirs.status().toString().c_str());
    QVERIFY(!mine->contentHash.empty());
    QVERIFY(mine->contentHash != theirs->contentHash);
  }

  void eachRuleOfTheBinding() {
    const kiln::ModelIdentity source{"aaaa", "", ""};
    const kiln::ModelIdentity ctx{"cccc", "aaaa", "/m/net.onnx"};
    const kiln::ModelIdentity unreadable{};
    // Its own model: shown, no note.
    auto b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("/m/net.onnx"), QStringLiteral("aaaa")), 10, source, 10);
    QCOMPARE(b.match, OverlayMatch::SameModel);
    QVERIFY(b.shown() && b.note.isEmpty());
    // Source data on the compiled model, and compiled-model data on its source: by name, with the count.
    b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("/m/net.onnx"), QStringLiteral("aaaa")), 10, ctx, 3);
    QCOMPARE(b.match, OverlayMatch::CompiledTwin);
    QVERIFY2(b.note.contains(QStringLiteral("3 of 10 nodes")), qPrintable(b.note));
    b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("/m/net_ctx.onnx"), QStringLiteral("cccc"), QStringLiteral("aaaa")), 4,
                                  source, 2);
    QCOMPARE(b.match, OverlayMatch::SourceTwin);
    QVERIFY2(b.note.contains(QStringLiteral("net_ctx.onnx")), qPrintable(b.note));
    // Another model, even with every name matching: not shown, and the note names the data's model.
    b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("/m/v2.onnx"), QStringLiteral("bbbb")), 10, source, 10);
    QCOMPARE(b.match, OverlayMatch::OtherModel);
    QVERIFY(!b.shown());
    QVERIFY2(b.note.contains(QStringLiteral("v2.onnx")) && b.note.contains(QStringLiteral("not shown")), qPrintable(b.note));
    // A twin with no name in common is another model too.
    b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("/m/net.onnx"), QStringLiteral("aaaa")), 5, ctx, 0);
    QCOMPARE(b.match, OverlayMatch::OtherModel);
    QVERIFY2(b.note.contains(QStringLiteral("inside this compiled model")), qPrintable(b.note));  // not "another model"
    // No hash in the data (an older file), or none for the model on display: by name, saying so.
    b = kiln::bridge::bindOverlay(dataOf(QStringLiteral("old.onnx"), {}), 8, source, 8);
    QCOMPARE(b.match, OverlayMatch::NamesOnly);
    QVERIFY2(b.note.contains(QStringLiteral("does not record")), qPrintable(b.note));
    QCOMPARE(kiln::bridge::bindOverlay(dataOf({}, QStringLiteral("aaaa")), 8, unreadable, 8).match, OverlayMatch::NamesOnly);
    QCOMPARE(kiln::bridge::bindOverlay(dataOf({}, {}), 8, source, 0).match, OverlayMatch::OtherModel);
  }

  // The window: another model's comparison (same node names) leaves the graph's colours alone, the legend says
  // whose data it is, and "Show first divergence" explains in the status bar; the model's own data colours it.
  void anotherModelsDataIsNotPaintedAndSaysWhy() {
    MainWindow window;
    window.resize(1200, 800);
    QVERIFY(kiln::testing::waitForLayout(*window.graphPanel(), [&] { window.openModel(tinyCnnPath()); }, kLoadTimeoutMs));
    const auto document = window.graphPanel()->document();
    QVERIFY(document);
    const auto hash = QString::fromStdString(document->modelIdentity().contentHash);
    QVERIFY(!hash.isEmpty());

    QVERIFY(window.comparePanel()->loadFile(writeNodeData(QStringLiteral("other_nodes.json"), *document, other_,
                                                          QString::fromStdString(kiln::identifyModel(other_.toStdString())->contentHash))));
    QCOMPARE(paintedNodes(window), 0);
    kiln::testing::saveScreenshot(&window, QStringLiteral("overlay-of-another-model.png"));
    const QString note = legendNote(window);
    QVERIFY2(note.contains(QStringLiteral("other.onnx")) && note.contains(QStringLiteral("not shown")), qPrintable(note));
    window.comparePanel()->showFirstDivergence();
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("other.onnx")),
             qPrintable(window.statusBar()->currentMessage()));

    // The same names, bound to the model on display: every node with a value is coloured, the divergence is shown.
    QVERIFY(window.comparePanel()->loadFile(writeNodeData(QStringLiteral("own_nodes.json"), *document, tinyCnnPath(), hash)));
    QVERIFY(paintedNodes(window) >= 2);
    QVERIFY2(legendNote(window).isEmpty(), qPrintable(legendNote(window)));
    window.statusBar()->clearMessage();
    window.comparePanel()->showFirstDivergence();
    QVERIFY(window.statusBar()->currentMessage().isEmpty());
    QCOMPARE(window.graphPanel()->view()->selectedNode(), firstOpNode(*document));

    // An older file without a hash: matched by name, and the legend says so.
    QVERIFY(window.comparePanel()->loadFile(writeNodeData(QStringLiteral("old_nodes.json"), *document, tinyCnnPath(), {})));
    QVERIFY(paintedNodes(window) >= 2);
    QVERIFY2(legendNote(window).contains(QStringLiteral("does not record")), qPrintable(legendNote(window)));
    kiln::testing::saveScreenshot(&window, QStringLiteral("overlay-matched-by-name.png"));
  }

 private:
  static int firstOpNode(const kiln::bridge::GraphDocument& document) {
    for (int i = 0; i < document.nodes().size(); ++i) {
      const auto& node = document.nodes()[i];
      if (node.kind == kiln::bridge::GraphNode::Kind::Op && !node.name.isEmpty() && !node.folded) return i;
    }
    return -1;
  }

  // A kiln-node-data file for `model` (hash `hash`, none when ""): every op node of `document` with an error, the
  // first one the first divergence.
  QString writeNodeData(const QString& name, const kiln::bridge::GraphDocument& document, const QString& model,
                        const QString& hash) {
    QJsonArray nodes;
    const int first = firstOpNode(document);
    for (int i = 0; i < document.nodes().size(); ++i) {
      const auto& node = document.nodes()[i];
      if (node.kind != kiln::bridge::GraphNode::Kind::Op || node.name.isEmpty() || node.folded) continue;
      QJsonObject entry{{QStringLiteral("node"), node.name},
                        {QStringLiteral("op_type"), node.opType},
                        {QStringLiteral("graph"), QStringLiteral("main")},
                        {QStringLiteral("metrics"), QJsonObject{{QStringLiteral("max_abs_error"), 1e-3 * (i + 1)}}}};
      if (i == first) entry.insert(QStringLiteral("first_divergence"), true);
      nodes.append(entry);
    }
    QJsonObject root{{QStringLiteral("format"), QStringLiteral("kiln-node-data")},
                     {QStringLiteral("version"), 1},
                     {QStringLiteral("kind"), QStringLiteral("compare")},
                     {QStringLiteral("producer"), QStringLiteral("kiln compare")},
                     {QStringLiteral("model"), model},
                     {QStringLiteral("nodes"), nodes}};
    if (!hash.isEmpty()) root.insert(QStringLiteral("model_hash"), hash);
    const QString path = dir_.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(QJsonDocument(root).toJson());
    return path;
  }

  // Op nodes drawn in another colour than their EP's.
  static int paintedNodes(MainWindow& window) {
    const auto document = window.graphPanel()->document();
    int painted = 0;
    for (auto it = window.graphPanel()->view()->nodeItems().begin(); it != window.graphPanel()->view()->nodeItems().end(); ++it) {
      const auto& node = document->nodes()[it.key()];
      if (node.kind != kiln::bridge::GraphNode::Kind::Op) continue;
      if (it.value()->fillColor() != kiln::studio::epQColor(node.executionProvider)) ++painted;
    }
    return painted;
  }

  static QString legendNote(MainWindow& window) {
    auto* legend = window.graphPanel()->view()->viewport()->findChild<OverlayLegend*>(QStringLiteral("graphOverlayLegend"));
    return legend && !legend->isHidden() ? legend->note() : QStringLiteral("<no legend>");
  }

  QTemporaryDir dir_;
  QString other_;
};

QTEST_MAIN(TestOverlayBinding)
#include "tst_overlay_binding.moc"
