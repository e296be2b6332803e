// BenchPanel's charts (bench_panel.h): session creation, steady latency as box plots, and stages; the current run in
// Okabe-Ito colours, a compared run pale in the same hues; every chart in the panel's light or dark palette.
#include <QBarCategoryAxis>
#include <QBarLegendMarker>
#include <QBarSeries>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QHorizontalStackedBarSeries>
#include <QCursor>
#include <QLegend>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "bench_charts.h"
#include "bench_panel.h"

namespace kiln::studio {

using bridge::BenchReport;
using bridge::BenchRow;

namespace {

// Okabe-Ito (Okabe & Ito, "Color Universal Design"): a qualitative palette that colour-blind readers tell apart
// too. The current run is drawn in these colours, a compared run in pale ones of the same hue (paleColor).
const QColor kBlue(0x00, 0x72, 0xb2);
const QColor kOrange(0xe6, 0x9f, 0x00);
const QColor kCreation = kBlue;
const QColor kFirstInference = kBlue;
const QColor kFirstResult = kOrange;
// Stage colours, one per stage: Okabe-Ito's seven hues, then five of Paul Tol's "muted" that differ from them, and
// grey; more stages than colours wrap around.
const QColor kStageColors[] = {kBlue,
                               kOrange,
                               QColor(0x00, 0x9e, 0x73),   // bluish green
                               QColor(0xd5, 0x5e, 0x00),   // vermillion
                               QColor(0x56, 0xb4, 0xe9),   // sky blue
                               QColor(0xf0, 0xe4, 0x42),   // yellow
                               QColor(0xcc, 0x79, 0xa7),   // reddish purple
                               QColor(0x88, 0x22, 0x55),   // wine
                               QColor(0x99, 0x99, 0x33),   // olive
                               QColor(0x33, 0x22, 0x88),   // indigo
                               QColor(0x44, 0xaa, 0x99),   // teal
                               QColor(0xcc, 0x66, 0x77),   // rose
                               QColor(0x99, 0x99, 0x99)};  // grey
// How far a compared run's colour moves toward the chart's background: pale on a light chart, faded on a dark one.
constexpr double kPaleness = 0.62;

// "epctx-file<br>warm": axis labels are rich text, and two short lines fit under a bar where "epctx-file / warm"
// would be cut short.
QString categoryLabel(const QString& mode, const QString& driverCache) {
  // "driver warm": the second word is the driver's shader cache, not Kiln's (that is the mode).
  return mode + QStringLiteral("<br>") +
         (driverCache == QLatin1String("n/a") ? driverCache : QStringLiteral("driver ") + driverCache);
}

// `color` moved kPaleness of the way toward `background`, opaque (legend markers show it as drawn).
QColor paleColor(const QColor& color, const QColor& background) {
  auto mix = [](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * kPaleness)); };
  return QColor(mix(color.red(), background.red()), mix(color.green(), background.green()),
                mix(color.blue(), background.blue()));
}

// The chart in the panel's palette (light or dark theme): background, title, legend, axis labels and grid.
void styleChart(QChart* chart, const QPalette& palette) {
  const QColor text = palette.color(QPalette::WindowText);
  QColor grid = text;
  grid.setAlpha(50);
  chart->setBackgroundBrush(palette.color(QPalette::Base));
  chart->setBackgroundPen(QPen(palette.color(QPalette::Mid)));
  chart->setTitleBrush(text);
  chart->legend()->setLabelColor(text);
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsColor(text);
    axis->setTitleBrush(text);
    axis->setLinePenColor(text);
    axis->setGridLineColor(grid);
  }
}

// "min 12.3 ms, p25 ..., max 20.1 ms over 5 runs": every number of a row's statistic, for tooltips.
QString statText(const bridge::BenchStat& s, int runs) {
  QStringList parts{QObject::tr("min %1").arg(bridge::formatMs(s.min))};
  if (s.p25) parts << QObject::tr("p25 %1").arg(bridge::formatMs(*s.p25));
  parts << QObject::tr("median %1").arg(bridge::formatMs(s.median));
  if (s.p75) parts << QObject::tr("p75 %1").arg(bridge::formatMs(*s.p75));
  if (s.p90) parts << QObject::tr("p90 %1").arg(bridge::formatMs(*s.p90));
  if (s.max) parts << QObject::tr("max %1").arg(bridge::formatMs(*s.max));
  return parts.join(QStringLiteral(", ")) + QObject::tr(" over %n run(s)", nullptr, runs);
}

// One category per row key; a row that only one of two compared reports has says which, so a missing bar or box
// is never read as 0 ms.
QBarCategoryAxis* categoryAxis(const QList<QPair<QString, QString>>& keys, const BenchReport& current,
                               const BenchReport* comparison) {
  auto* axis = new QBarCategoryAxis;
  for (const auto& key : keys) {
    QString label = categoryLabel(key.first, key.second);
    if (comparison && !current.findRow(key.first, key.second)) label += QObject::tr("<br>(earlier run only)");
    if (comparison && !comparison->findRow(key.first, key.second)) label += QObject::tr("<br>(this run only)");
    axis->append(label);
  }
  return axis;
}

QChart* resetChart(QChartView* view, const QString& title) {
  QChart* chart = view->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  chart->setTitle(title);
  return chart;
}

QValueAxis* valueAxis(const QString& title, double maximum) {
  auto* axis = new QValueAxis;
  axis->setTitleText(title);
  axis->setRange(0, maximum > 0 ? maximum * 1.12 : 1.0);
  axis->setLabelFormat(QStringLiteral("%.0f"));
  if (maximum > 0 && maximum < 10) axis->setLabelFormat(QStringLiteral("%.1f"));
  axis->applyNiceNumbers();
  return axis;
}

}  // namespace

// What a latency bar's tooltip says: its value, or that its report did not measure that mode.
QString latencyTip(const QPair<QString, QString>& key, const QBarSet* set, int index) {
  if (set->property("missing").toList().contains(index)) {
    return QObject::tr("%1, driver cache %2: not measured in the %3 run")
        .arg(key.first, key.second, set->property("earlier").toBool() ? QObject::tr("earlier") : QObject::tr("current"));
  }
  return QObject::tr("%1, driver cache %2: %3 %4").arg(key.first, key.second, set->label(), bridge::formatMs(set->at(index)));
}

// Rows of both reports by (mode, driver cache): the current report's order, then rows only the earlier one has.
QList<QPair<QString, QString>> benchRowKeys(const BenchReport* current, const BenchReport* comparison) {
  QList<QPair<QString, QString>> keys;
  for (const BenchReport* report : {current, comparison}) {
    if (!report) continue;
    for (const BenchRow& row : report->rows) {
      const QPair<QString, QString> key{row.mode, row.driverCache};
      if (!keys.contains(key)) keys.append(key);
    }
  }
  return keys;
}

void BenchPanel::refreshCreationChart() {
  QChart* chart = resetChart(creationView_, tr("Session creation (ms)"));
  if (!current_) return;
  const auto keys = benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  const QColor background = palette().color(QPalette::Base);
  const QColor text = palette().color(QPalette::WindowText);
  double maximum = 0;
  bool withoutQuartiles = false;
  auto addSeries = [&](const BenchReport& report, const QString& objectName, bool earlier) {
    auto* series = new QBoxPlotSeries;
    series->setObjectName(objectName);
    series->setName(earlier ? tr("%1 (earlier)").arg(report.caption()) : report.caption());
    // The current run: solid, outlined in the text colour (whiskers and median readable in both themes). A compared
    // run: pale, outlined in its hue, so it reads as the same quantity, earlier.
    series->setBrush(earlier ? paleColor(kCreation, background) : kCreation);
    series->setPen(QPen(earlier ? kCreation : text, 1.2));
    series->setBoxWidth(0.6);
    for (const auto& key : keys) {
      const BenchRow* row = report.findRow(key.first, key.second);
      // Box plots are positional: a row this report lacks is an invisible box, so the others keep their place.
      auto* set = new QBoxSet(key.first + QStringLiteral(" / ") + key.second);
      if (row) {
        const bridge::BenchStat& s = row->sessionCreate;
        set->setValue(QBoxSet::LowerExtreme, s.min);
        set->setValue(QBoxSet::Median, s.median);
        if (s.hasBoxPlot()) {
          // The standard box plot: box from p25 to p75, whiskers to min and max.
          set->setValue(QBoxSet::LowerQuartile, *s.p25);
          set->setValue(QBoxSet::UpperQuartile, *s.p75);
          set->setValue(QBoxSet::UpperExtreme, *s.max);
          maximum = std::max(maximum, *s.max);
        } else {
          // A report written before kiln bench gave quartiles: the median line with whiskers to min and p90 (to the
          // median when it has no p90 either).
          const double upper = s.p90.value_or(s.median);
          set->setValue(QBoxSet::LowerQuartile, s.median);
          set->setValue(QBoxSet::UpperQuartile, s.median);
          set->setValue(QBoxSet::UpperExtreme, upper);
          maximum = std::max(maximum, upper);
          withoutQuartiles = true;
        }
        set->setProperty("toolTip", QStringLiteral("<b>%1</b>, driver cache %2%3<br>%4")
                                        .arg(key.first, key.second, earlier ? tr(" (earlier run)") : QString(),
                                             statText(s, row->runs).toHtmlEscaped()) +
                                        (s.hasBoxPlot() ? QString() : tr("<br>No quartiles in this report: "
                                                                         "whiskers from min to p90.")));
      } else {
        set->setPen(Qt::NoPen);
        set->setBrush(Qt::NoBrush);
      }
      series->append(set);
    }
    connect(series, &QBoxPlotSeries::hovered, creationView_, [](bool inside, QBoxSet* set) {
      if (inside) QToolTip::showText(QCursor::pos(), set->property("toolTip").toString());
      else QToolTip::hideText();
    });
    chart->addSeries(series);
  };
  addSeries(*current_, QStringLiteral("current"), false);
  if (comparison_) addSeries(*comparison_, QStringLiteral("comparison"), true);
  chart->setTitle(tr("Session creation (ms)<br><small>box: p25 to p75, line: median, whiskers: min and max%1</small>")
                      .arg(withoutQuartiles ? tr(" (p90 for older reports)") : QString()));
  QBarCategoryAxis* axisX = categoryAxis(keys, *current_, comparison_ ? &*comparison_ : nullptr);
  chart->addAxis(axisX, Qt::AlignBottom);
  QValueAxis* axisY = valueAxis(tr("ms"), maximum);
  chart->addAxis(axisY, Qt::AlignLeft);
  for (QAbstractSeries* series : chart->series()) {
    series->attachAxis(axisX);
    series->attachAxis(axisY);
  }
  chart->legend()->setVisible(comparison_.has_value());
  styleChart(chart, palette());
}

void BenchPanel::refreshLatencyChart() {
  QChart* chart = resetChart(latencyView_, tr("First inference and time to first result (median ms)"));
  latencyMaximum_ = 0;
  if (!current_) return;
  const auto keys = benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  const QColor background = palette().color(QPalette::Base);
  auto* series = new QBarSeries;
  series->setObjectName(QStringLiteral("latency"));
  series->setBarWidth(0.85);  // wide bars: each value label needs a bar at least a line of text wide
  auto addSets = [&](const BenchReport& report, bool earlier) {
    auto* first = new QBarSet(earlier ? tr("first inference (earlier)") : tr("first inference"));
    auto* result = new QBarSet(earlier ? tr("time to first result (earlier)") : tr("time to first result"));
    first->setObjectName(earlier ? QStringLiteral("firstInferenceEarlier") : QStringLiteral("firstInference"));
    result->setObjectName(earlier ? QStringLiteral("timeToFirstResultEarlier") : QStringLiteral("timeToFirstResult"));
    for (auto [set, color] : {std::pair{first, kFirstInference}, std::pair{result, kFirstResult}}) {
      set->setColor(earlier ? paleColor(color, background) : color);
      set->setBorderColor(earlier ? color : color.darker(125));
      // Values are written over the current run's bars only: the earlier ones are in the tooltips and the table.
      set->setLabelColor(earlier ? QColor(Qt::transparent) : palette().color(QPalette::WindowText));
    }
    // A mode this report lacks is a bar of height 0: no value label (a report with such a gap writes its values in
    // the tooltips only, as a narrow chart does), "not measured" in its tooltip, "only" on its axis label.
    QVariantList missing;
    for (const auto& key : keys) {
      const BenchRow* row = report.findRow(key.first, key.second);
      if (!row) missing.append(static_cast<int>(first->count()));
      first->append(row ? row->firstInference.median : 0);
      result->append(row ? row->timeToFirstResult.median : 0);
      if (row) latencyMaximum_ = std::max(latencyMaximum_, row->timeToFirstResult.median);
    }
    for (QBarSet* set : {first, result}) {
      set->setProperty("missing", missing);
      set->setProperty("earlier", earlier);
      if (!missing.isEmpty()) set->setLabelColor(Qt::transparent);
    }
    series->append(first);
    series->append(result);
  };
  addSets(*current_, false);
  if (comparison_) addSets(*comparison_, true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  // Four significant digits, and every digit of the integer part ("12345", never "1.234e+04").
  const int integerDigits = latencyMaximum_ >= 1 ? static_cast<int>(std::floor(std::log10(latencyMaximum_))) + 1 : 1;
  series->setLabelsPrecision(std::max(4, integerDigits));
  // Upright labels are wider than a bar and ran into each other ("0.7917.15"); turned, each stays over its bar.
  series->setLabelsAngle(-90);
  connect(series, &QBarSeries::hovered, latencyView_, [keys](bool inside, int index, QBarSet* set) {
    if (!inside || index < 0 || index >= keys.size()) return QToolTip::hideText();
    QToolTip::showText(QCursor::pos(), latencyTip(keys[index], set, index));
  });
  chart->addSeries(series);
  QBarCategoryAxis* axisX = categoryAxis(keys, *current_, comparison_ ? &*comparison_ : nullptr);
  chart->addAxis(axisX, Qt::AlignBottom);
  QValueAxis* axisY = valueAxis(tr("ms"), latencyMaximum_);
  chart->addAxis(axisY, Qt::AlignLeft);
  series->attachAxis(axisX);
  series->attachAxis(axisY);
  styleChart(chart, palette());
  fitLatencyLabels();
}

void BenchPanel::fitLatencyLabels() {
  QChart* chart = latencyView_->chart();
  QBarSeries* series = nullptr;
  for (QAbstractSeries* s : chart->series()) series = series ? series : qobject_cast<QBarSeries*>(s);
  const QList<QAbstractAxis*> vertical = chart->axes(Qt::Vertical);
  if (!series || vertical.isEmpty() || series->count() == 0) return;
  auto* axisY = static_cast<QValueAxis*>(vertical.first());
  // A turned label is one line of text wide: shown only while every bar is at least that wide, so no two labels
  // (close values on neighbouring bars included) can touch. Otherwise the values are in the tooltips.
  const QFontMetricsF metrics(series->barSets().first()->labelFont());
  const QRectF plot = chart->plotArea();
  const int categories = static_cast<int>(series->barSets().first()->count());
  const double barPixels = categories > 0 ? plot.width() / categories * series->barWidth() / series->count() : 0;
  const bool fits = barPixels >= metrics.height() + 2 && plot.height() > 0;
  if (series->isLabelsVisible() != fits) series->setLabelsVisible(fits);
  // Room above the tallest bar for its label, so the label stays inside the plot, clear of the title.
  double top = latencyMaximum_ > 0 ? latencyMaximum_ * 1.12 : 1.0;
  if (fits && latencyMaximum_ > 0) {
    const double labelPixels = metrics.horizontalAdvance(QString::number(latencyMaximum_, 'g', series->labelsPrecision())) + 8;
    const double share = std::min(0.6, labelPixels / plot.height());
    top = std::max(top, latencyMaximum_ / (1 - share));
  }
  if (std::abs(axisY->max() - top) / top > 0.02 && axisY->max() < top) {
    axisY->setRange(0, top);
    axisY->applyNiceNumbers();
  }
}

void BenchPanel::refreshStageChart() {
  QChart* chart = resetChart(stageView_, tr("Session creation stages (median ms)"));
  if (!current_) return;
  // Bars, bottom to top: each row of the current report, with its earlier counterpart right after it.
  struct Bar {
    const BenchRow* row;
    QString label;
    bool earlier;
  };
  QList<Bar> bars;
  const auto keys = benchRowKeys(&*current_, comparison_ ? &*comparison_ : nullptr);
  for (const auto& key : keys) {
    if (const BenchRow* row = current_->findRow(key.first, key.second)) bars.append({row, row->label(), false});
    if (comparison_) {
      if (const BenchRow* row = comparison_->findRow(key.first, key.second)) {
        bars.append({row, row->label() + tr(" (earlier)"), true});
      }
    }
  }
  QStringList stageKeys;
  for (const Bar& bar : bars) {
    for (const auto& stage : bar.row->stages) {
      if (!stageKeys.contains(stage.first)) stageKeys.append(stage.first);
    }
  }
  auto* series = new QHorizontalStackedBarSeries;
  series->setObjectName(QStringLiteral("stages"));
  series->setBarWidth(0.7);
  const QColor background = palette().color(QPalette::Base);
  double maximum = 0;
  // One set per stage for the current run's bars; with a comparison, a pale twin per stage for the earlier bars
  // (a set has one colour), left out of the legend.
  for (bool earlier : {false, true}) {
    if (earlier && !comparison_) break;
    for (qsizetype s = 0; s < stageKeys.size(); ++s) {
      const QColor color = kStageColors[static_cast<size_t>(s) % std::size(kStageColors)];
      auto* set = new QBarSet(bridge::stageDisplayName(stageKeys[s]));
      set->setObjectName(earlier ? QStringLiteral("earlier:") + stageKeys[s] : stageKeys[s]);
      set->setColor(earlier ? paleColor(color, background) : color);
      set->setBorderColor(earlier ? color : background);
      for (const Bar& bar : bars) {
        double value = 0;
        for (const auto& stage : bar.row->stages) {
          if (stage.first == stageKeys[s] && bar.earlier == earlier) value = stage.second;
        }
        set->append(value);
      }
      series->append(set);
    }
  }
  for (const Bar& bar : bars) {
    double total = 0;
    for (const auto& stage : bar.row->stages) total += stage.second;
    maximum = std::max(maximum, total);
  }
  connect(series, &QHorizontalStackedBarSeries::hovered, stageView_, [bars](bool inside, int index, QBarSet* set) {
    if (!inside || index < 0 || index >= bars.size()) return QToolTip::hideText();
    QToolTip::showText(QCursor::pos(),
                       QStringLiteral("%1: %2 %3").arg(bars[index].label, set->label(), bridge::formatMs(set->at(index))));
  });
  chart->addSeries(series);
  for (QLegendMarker* marker : chart->legend()->markers(series)) {
    auto* barMarker = qobject_cast<QBarLegendMarker*>(marker);
    if (barMarker && barMarker->barset()->objectName().startsWith(QLatin1String("earlier:"))) marker->setVisible(false);
  }
  auto* axisY = new QBarCategoryAxis;
  for (const Bar& bar : bars) axisY->append(bar.label);
  chart->addAxis(axisY, Qt::AlignLeft);
  QValueAxis* axisX = valueAxis(tr("ms"), maximum);
  chart->addAxis(axisX, Qt::AlignBottom);
  series->attachAxis(axisY);
  series->attachAxis(axisX);
  styleChart(chart, palette());
}

}  // namespace kiln::studio
