// NodeDetailsView: the selected node of the graph view: where it runs (EP, partition, why it fell back to the
// CPU), its attributes and its inputs/outputs with types and shapes. For EPContext nodes it shows the decoded
// attributes (never the payload bytes) and an "Inspect binary" link to the binary inspector. Constants folded into
// the node are listed with dtype, shape, range and their first values; If/Loop/Scan nodes link to their bodies.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>

#include "compare_job.h"
#include "graph_document.h"

class QTextBrowser;

namespace kiln::studio {

class NodeDetailsView : public QWidget {
  Q_OBJECT

 public:
  explicit NodeDetailsView(QWidget* parent = nullptr);

  void showNode(const bridge::GraphDocument& document, int node);
  void showCluster(const bridge::GraphDocument& document, int cluster);
  // A group of nodes (graph_groups.h): how it was formed, where it runs, its ops by count, its first and last node,
  // what flows in and out, and its nodes.
  void showGroup(const bridge::GraphDocument& document, int group);
  // Adds the per-node data of the shown node below its details: every metric of `row` (a compare run's error
  // statistics or a profile's time) and, for compare data, the histogram of its differences as an image.
  void appendNodeMetrics(const bridge::NodeMetricRow& row, const QString& kind);
  // True when the histogram image is part of what is shown (tests).
  bool showsHistogram() const { return histogram_; }
  void clear();
  // What the view shows, as plain text (for tests and copying).
  QString text() const;
  // The binary the "Inspect binary" link opens, "" when none is shown.
  QString binaryLink() const { return binaryPath_; }

 signals:
  void inspectBinaryRequested(const QString& binaryPath);
  void openBodyRequested(const QString& graphPath);

 private:
  QTextBrowser* browser_;
  QString binaryPath_;
  QString nodeHtml_;  // the shown op node's details, before per-node data is added
  bool histogram_ = false;
  QImage histogramImage_;
};

}  // namespace kiln::studio
