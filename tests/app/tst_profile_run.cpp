// "Profile now" (issue 22, item 5): the Compare panel profiles the open model in its worker
// (kiln/run_profile.h, the last of two runs), with progress and cancel; the per-node times colour the graph
// and fill the top-N table, and every overlay value equals the profile's time for that node. Cancel ends with
// nothing shown; a missing input file fails with the reason.
#include <QHeaderView>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "compare_panel.h"
#include "graph_panel.h"
#include "graph_view.h"
#include "kiln/device.h"
#include "node_overlay.h"
#include "requirements.h"

using kiln::studio::ComparePanel;
using kiln::studio::NodeOverlay;

namespace {

constexpr int kTimeoutMs = 120000;
QString tinyCnn() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

}  // namespace

class TestProfileRun : public QObject {
  Q_OBJECT

 private slots:
  void profilesAndColoursTheGraph() {
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("cpu"), QStringLiteral("cpu"));
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QSignalSpy overlayChanged(&panel, &ComparePanel::overlayChanged);
    QVERIFY(panel.profile());
    QVERIFY(panel.isRunning());
    QVERIFY(!panel.findChild<QPushButton*>(QStringLiteral("profileButton"))->isEnabled());
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("cancelButton"))->isEnabled());
    QVERIFY2(finished.wait(kTimeoutMs),
             qPrintable(failed.isEmpty() ? panel.statusText() : failed.first().first().toString()));
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("profileButton"))->isEnabled());

    const auto& results = panel.results();
    QCOMPARE(results.nodes.kind, QStringLiteral("profile"));
    QVERIFY(results.outputs.isEmpty());
    QCOMPARE(panel.overlay().metric(), QStringLiteral("time_ms"));
    QVERIFY(!overlayChanged.isEmpty());
    // Every overlay value is the profile's time for that node.
    int timed = 0;
    for (const auto& row : results.nodes.nodes) {
      const double time = row.metrics.value(QStringLiteral("time_ms"), std::nan(""));
      QVERIFY2(std::isfinite(time), qPrintable(row.node));
      QCOMPARE(panel.overlay().value(row.node).value(), time);
      QCOMPARE(row.executionProvider, QStringLiteral("CPUExecutionProvider"));  // the side's EPs ran it
      timed += time > 0 ? 1 : 0;
    }
    QVERIFY(timed >= 5);  // tiny_cnn's CPU nodes each take measurable time
    auto* top = panel.findChild<QTableWidget*>(QStringLiteral("topTable"));
    QVERIFY(top->rowCount() >= 5);
    QCOMPARE(top->item(0, 0)->text(), panel.overlay().topNodes(1).first().first);
    // Sortable: by value ascending, the smallest time comes first (numerically, not by its text).
    top->sortItems(2, Qt::AscendingOrder);
    for (int row = 1; row < top->rowCount(); ++row) {
      QVERIFY(top->item(row - 1, 2)->data(Qt::UserRole).toDouble() <=
              top->item(row, 2)->data(Qt::UserRole).toDouble());
    }
    QVERIFY(panel.statusText().contains(QStringLiteral("per-node profile data")));

    // The graph's nodes take the colours of their times.
    kiln::studio::GraphPanel graph;
    QSignalSpy ready(&graph, &kiln::studio::GraphPanel::layoutReady);
    graph.openModel(tinyCnn());
    QVERIFY(ready.wait(kTimeoutMs));
    const int coloured = panel.overlay().applyTo(graph.view(), *graph.document());
    QVERIFY(coloured >= 5);
    for (auto it = graph.view()->nodeItems().begin(); it != graph.view()->nodeItems().end(); ++it) {
      const auto& node = graph.document()->nodes()[it.key()];
      const auto time = panel.overlay().value(node.name);
      if (node.kind != kiln::bridge::GraphNode::Kind::Op || !time) continue;
      QCOMPARE(it.value()->fillColor(), panel.overlay().colorForValue(*time));
    }
  }

  // On Vulkan the compiled partition's nodes get their own device times (kiln.vulkan.profile=1 for the profiled
  // session, covered_ms in the profile): rows named as the model's nodes, no KilnPartition row, and the graph's
  // Vulkan nodes coloured by those times.
  void vulkanPartitionNodesGetTheirDeviceTimes() {
    const auto devices = kiln::listVulkanDevices();
    if (!devices.isOk() || devices->empty()) {
      if (kiln::testing::vulkanRequired()) QFAIL("KILN_REQUIRE_VULKAN=1 but no Vulkan device");
      QSKIP("no Vulkan device (lavapipe: mesa-vulkan-drivers)");
    }
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("vulkan"), QStringLiteral("cpu"));
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QVERIFY(panel.profile());
    QVERIFY2(finished.wait(kTimeoutMs),
             qPrintable(failed.isEmpty() ? panel.statusText() : failed.first().first().toString()));
    int vulkanTimed = 0;
    for (const auto& row : panel.results().nodes.nodes) {
      QVERIFY2(row.opType != QStringLiteral("KilnPartition"), qPrintable(row.node));  // replaced by its nodes
      const double time = row.metrics.value(QStringLiteral("time_ms"), std::nan(""));
      QVERIFY2(std::isfinite(time) && time >= 0, qPrintable(row.node));
      QCOMPARE(panel.overlay().value(row.node).value(), time);
      if (row.executionProvider == QStringLiteral("VulkanExecutionProvider") && time > 0) ++vulkanTimed;
    }
    QVERIFY(vulkanTimed >= 3);  // tiny_cnn's convolutions dispatch on the device
    kiln::studio::GraphPanel graph;
    QSignalSpy ready(&graph, &kiln::studio::GraphPanel::layoutReady);
    graph.openModel(tinyCnn());
    QVERIFY(ready.wait(kTimeoutMs));
    QVERIFY(panel.overlay().applyTo(graph.view(), *graph.document()) >= vulkanTimed);
  }

  void cancelEndsWithNothingShown() {
    ComparePanel panel;
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("cpu"), QStringLiteral("cpu"));
    QSignalSpy finished(&panel, &ComparePanel::finished);
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QSignalSpy started(&panel, &ComparePanel::progressed);
    panel.setProfileRuns(1000000);  // far longer than the test: only cancel ends it
    QVERIFY(panel.profile());
    QVERIFY(started.wait(kTimeoutMs));  // inside the runs, then cancelled: the run in progress ends at once
    while (!started.isEmpty() && started.last().first().toString() != QStringLiteral("profile"))
      QVERIFY(started.wait(kTimeoutMs));
    panel.cancel();
    QVERIFY(failed.wait(kTimeoutMs));
    QCOMPARE(failed.first().first().toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(finished.count(), 0);
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("Cancelled: nothing was profiled")),
             qPrintable(panel.statusText()));
    QVERIFY(panel.overlay().isEmpty());
    QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("profileButton"))->isEnabled());
    panel.setProfileRuns(2);
    QVERIFY(panel.profile());  // and it runs again afterwards
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(!panel.overlay().isEmpty());
  }

  void badInputsAreReported() {
    ComparePanel panel;
    QVERIFY(!panel.profile());  // no model
    QVERIFY(panel.statusText().contains(QStringLiteral("Choose a model file to profile")));
    panel.setModelPath(tinyCnn());
    panel.configure(QStringLiteral("cpu"), QStringLiteral("cpu"));
    panel.setProfileInputs(QStringLiteral("image=/nonexistent/x.npy"));
    QSignalSpy failed(&panel, &ComparePanel::failed);
    QVERIFY(panel.profile());
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("The profiled run failed")),
             qPrintable(panel.statusText()));
    QVERIFY(panel.overlay().isEmpty());
  }
};

QTEST_MAIN(TestProfileRun)
#include "tst_profile_run.moc"
