// NodeDetailsView: the selected node of the graph view: where it runs (EP, partition, why it fell back to the
// CPU), its attributes and its inputs/outputs with types and shapes. For EPContext nodes it shows the decoded
// attributes (never the payload bytes) and an "Inspect binary" link to the binary inspector. Constants folded into
// the node are listed with dtype, shape, range and their first values; If/Loop/Scan nodes link to their bodies.
#pragma once

#include <QString>
#include <QWidget>

#include "graph_document.h"

class QTextBrowser;

namespace kiln::studio {

class NodeDetailsView : public QWidget {
  Q_OBJECT

 public:
  explicit NodeDetailsView(QWidget* parent = nullptr);

  void showNode(const bridge::GraphDocument& document, int node);
  void showCluster(const bridge::GraphDocument& document, int cluster);
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
};

}  // namespace kiln::studio
