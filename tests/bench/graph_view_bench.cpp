// graph_view_bench MODEL...: the studio's graph view on real and generated models (a benchmark, not a test).
// For each model it prints one JSON line:
//   open_to_laid_out_ms  openModel() to layoutReady (inspect + partition analysis + dot + parse + items)
//   load_ms, layout_ms   the two halves as the panel measured them
//   paint_fit_ms         median of 9 renders of the view at fit-to-view into a QImage of the view's size
//   expanded_*           the same after "Expand all", for graphs that open with collapsed partitions;
//                        expanded_tensor_shapes_ms: turning tensor shapes on edges on (placing every text)
// Targets (issue 7): open PP-OCRv4 det (~670 nodes) in under 2 s; paint at fit-to-view under 50 ms.
// --screenshot DIR saves a grab of the panel per model (fit-to-view, and zoomed onto a selected node).
// Run headless: QT_QPA_PLATFORM=offscreen build/ci/tests/app/graph_view_bench ~/.cache/kiln/models/ch_PP-OCRv4_det_infer.onnx
// big.onnx (big.onnx from tests/tools/make_big_graph.py).
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "graph_panel.h"
#include "graph_view.h"

using kiln::studio::GraphPanel;

namespace {

// Waits for layoutReady or failed; returns the elapsed ms, or -1 on failure or timeout.
double waitForLayout(GraphPanel& panel, const std::function<void()>& start, QString* error) {
  QEventLoop loop;
  bool ok = false;
  auto readyConnection = QObject::connect(&panel, &GraphPanel::layoutReady, &loop, [&] {
    ok = true;
    loop.quit();
  });
  auto failedConnection = QObject::connect(&panel, &GraphPanel::failed, &loop, [&](const QString& message) {
    *error = message;
    loop.quit();
  });
  QTimer::singleShot(120000, &loop, [&] {
    *error = QStringLiteral("timed out");
    loop.quit();
  });
  QElapsedTimer timer;
  timer.start();
  start();
  loop.exec();
  const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  QObject::disconnect(readyConnection);
  QObject::disconnect(failedConnection);
  return ok ? ms : -1;
}

// What the viewport paints at fit-to-view: the view's own render of its visible area, median of 9.
double paintAtFitMs(GraphPanel& panel) {
  panel.view()->fitAll();
  QCoreApplication::processEvents();
  const QSize size = panel.view()->viewport()->size();
  std::vector<double> times;
  for (int i = 0; i < 9; ++i) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QElapsedTimer timer;
    timer.start();
    {
      QPainter painter(&image);
      painter.setRenderHints(panel.view()->renderHints());
      panel.view()->render(&painter, QRectF(image.rect()), panel.view()->viewport()->rect());
    }
    times.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStringList models = app.arguments().mid(1);
  QString screenshotDir;
  const qsizetype flag = models.indexOf(QStringLiteral("--screenshot"));
  if (flag >= 0 && flag + 1 < models.size()) {
    screenshotDir = models[flag + 1];
    models.remove(flag, 2);
  }
  if (models.isEmpty()) {
    std::fprintf(stderr, "usage: graph_view_bench MODEL.onnx...\n");
    return 2;
  }
  int failures = 0;
  for (const QString& model : models) {
    GraphPanel panel;
    panel.resize(1280, 800);
    panel.show();
    QCoreApplication::processEvents();
    QString error;
    QJsonObject row{{QStringLiteral("model"), QFileInfo(model).fileName()}};
    const double openMs = waitForLayout(panel, [&] { panel.openModel(model); }, &error);
    if (openMs < 0) {
      row.insert(QStringLiteral("error"), error);
      std::printf("%s\n", QJsonDocument(row).toJson(QJsonDocument::Compact).constData());
      ++failures;
      continue;
    }
    const auto doc = panel.document();
    int collapsed = 0;
    for (int c = 0; c < doc->clusters().size(); ++c) collapsed += panel.isClusterCollapsed(c) ? 1 : 0;
    row.insert(QStringLiteral("nodes"), doc->opNodeCount());
    row.insert(QStringLiteral("partitions"), static_cast<int>(doc->clusters().size()));
    row.insert(QStringLiteral("collapsed_partitions"), collapsed);
    row.insert(QStringLiteral("open_to_laid_out_ms"), openMs);
    row.insert(QStringLiteral("load_ms"), panel.lastLoadMs());
    row.insert(QStringLiteral("layout_ms"), panel.lastLayoutMs());
    row.insert(QStringLiteral("scene_items"), static_cast<int>(panel.scene()->items().size()));
    row.insert(QStringLiteral("paint_fit_ms"), paintAtFitMs(panel));
    if (!screenshotDir.isEmpty()) {
      const QString stem = screenshotDir + QStringLiteral("/") + QFileInfo(model).completeBaseName();
      panel.grab().save(stem + QStringLiteral("_fit.png"));
      // Zoomed onto the most telling node: a CPU fallback, else an EPContext node, else the middle one.
      int pick = doc->nodes().size() / 2;
      for (int i = 0; i < doc->nodes().size(); ++i) {
        if (doc->nodes()[i].cpuFallback() || doc->nodes()[i].epContext) {
          pick = i;
          break;
        }
      }
      panel.selectNode(pick);
      QCoreApplication::processEvents();
      panel.grab().save(stem + QStringLiteral("_node.png"));
    }
    if (collapsed > 0) {
      const double expandMs = waitForLayout(panel, [&] { panel.expandAll(); }, &error);
      row.insert(QStringLiteral("expanded_relayout_ms"), expandMs);
      if (expandMs >= 0) {
        row.insert(QStringLiteral("expanded_layout_ms"), panel.lastLayoutMs());
        row.insert(QStringLiteral("expanded_scene_items"), static_cast<int>(panel.scene()->items().size()));
        row.insert(QStringLiteral("expanded_paint_fit_ms"), paintAtFitMs(panel));
        // View > Tensor Shapes on Edges on the expanded graph: placing every edge's text, once.
        QElapsedTimer shapes;
        shapes.start();
        panel.view()->setTensorShapesShown(true);
        row.insert(QStringLiteral("expanded_tensor_shapes_ms"), static_cast<double>(shapes.nsecsElapsed()) / 1e6);
        panel.view()->setTensorShapesShown(false);
      }
    }
    std::printf("%s\n", QJsonDocument(row).toJson(QJsonDocument::Compact).constData());
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}
