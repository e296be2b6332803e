// What the benchmark panel's chart builders (bench_charts.cpp: the creation, latency and stage charts, in the
// Okabe-Ito palette with pale compared runs) share with the rest of the panel (bench_panel.cpp).
#pragma once

#include <QList>
#include <QPair>
#include <QString>

class QBarSet;

#include "bench_runner.h"

namespace kiln::studio {

// Rows of both reports by (mode, driver cache): the current report's order, then rows only the earlier one has.
// Either report may be null.
QList<QPair<QString, QString>> benchRowKeys(const bridge::BenchReport* current, const bridge::BenchReport* comparison);

// The tooltip of bar `index` (row `key`) of one of the latency chart's sets: its value, or, for a mode the set's
// report did not measure (a bar of height 0 listed in the set's "missing" property), that it was not measured.
QString latencyTip(const QPair<QString, QString>& key, const QBarSet* set, int index);

}  // namespace kiln::studio
