// NodeOverlay: colours a graph's nodes by a per-node quantity (time from a profiled run, error from a compare run)
// with a legend and a top-N table. The mapping is a sequential scale from the smallest to the largest value
// (logarithmic when the values span more than two decades, as times and errors usually do); nodes without a value
// keep their EP colour, and the first diverging node of a compare run is drawn in its own colour. The data is drawn
// only on the model it belongs to (or by name on its compiled twin: overlay_binding.h); on another model the
// legend says so and no node changes colour.
#pragma once

#include <QColor>
#include <QHash>
#include <QImage>
#include <QList>
#include <QString>
#include <QWidget>

#include <optional>
#include <utility>

#include "compare_job.h"
#include "graph_document.h"
#include "overlay_binding.h"

class QTableWidget;

namespace kiln::studio {

class GraphView;

class NodeOverlay {
 public:
  static constexpr QRgb kFirstDivergence = 0xd500f9;  // magenta: no scale colour comes near it
  static constexpr QRgb kNoData = 0xdcdcdc;           // light grey: a node the data does not cover

  // Uses `metric` of every node of `data` that has it.
  void setData(const bridge::NodeMetrics& data, const QString& metric);
  void clear();

  const QString& metric() const { return metric_; }
  double minimum() const { return min_; }
  double maximum() const { return max_; }
  bool logarithmic() const { return log_; }
  bool isEmpty() const { return values_.isEmpty(); }

  // What the data says about `node` (every metric, the error histogram), or nullptr; kind() is the data's kind.
  const bridge::NodeMetricRow* row(const QString& node) const;
  const QString& kind() const { return kind_; }

  // The value of `node` (by name), if the data has one.
  std::optional<double> value(const QString& node) const;
  // The colour of `value` on the scale: pale yellow at the minimum, through orange, to dark red at the maximum.
  QColor colorForValue(double value) const;
  // The colour `node` is drawn in; nullopt for a node without data.
  std::optional<QColor> colorFor(const QString& node) const;
  // The `n` nodes with the largest values, largest first.
  QList<std::pair<QString, double>> topNodes(int n) const;

  // How the data goes onto graph `document` of the model with `identity` (overlay_binding.h).
  bridge::OverlayBinding binding(const bridge::GraphDocument& document, const ModelIdentity& identity) const;
  // When binding() shows the data: fills every op node of `view` (showing `document`) that has data with its
  // colour and the others with kNoData (their EP colour would read as a value of the scale). The legend in the
  // view's corner shows the scale and the binding's note; data that does not belong on the model leaves every node
  // its EP colour and the legend only says why. Returns how many nodes were coloured. With an empty overlay every
  // node gets its EP colour back and the legend goes.
  int applyTo(GraphView* view, const bridge::GraphDocument& document, const ModelIdentity& identity = {}) const;
  // The index in `document` of the op node named `node`, -1 when there is none.
  static int nodeIndex(const bridge::GraphDocument& document, const QString& node);

 private:
  double position(double value) const;  // 0..1 along the scale

  QString metric_, firstDivergence_, kind_;
  bridge::NodeMetrics identity_;  // the data's model and identity, and its node count (rows stay in rows_)
  QHash<QString, double> values_;
  QHash<QString, bridge::NodeMetricRow> rows_;
  double min_ = 0, max_ = 0;
  bool log_ = false;
};

// The overlay's legend: the metric's name, the colour scale with its minimum and maximum, and the first-divergence
// and no-data swatches.
class OverlayLegend : public QWidget {
  Q_OBJECT

 public:
  explicit OverlayLegend(QWidget* parent = nullptr);
  // `note`: how the data was placed on this model, or why it is not shown (then only the note is drawn).
  void setOverlay(const NodeOverlay* overlay, bool showFirstDivergence, const bridge::OverlayBinding& binding = {});
  const QString& note() const { return binding_.note; }
  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  int noteHeight(int width) const;
  int scaleHeight() const;  // the title and colour scale; none when the data is not shown

  const NodeOverlay* overlay_ = nullptr;
  bool firstDivergence_ = false;
  bridge::OverlayBinding binding_;
};

// A bar chart of `counts` (one per kiln::errorHistogramLowerEdge bin of |difference|) `width` px wide: bars on
// the overlay's scale colours, decade labels below, each non-empty bar's count above it, in `text` colour.
QImage errorHistogramImage(const QVector<qint64>& counts, int width, const QColor& text);

// Formats a metric value for tables and the legend: times in ms with 3 significant digits, errors in %g.
QString formatMetric(const QString& metric, double value);

}  // namespace kiln::studio
