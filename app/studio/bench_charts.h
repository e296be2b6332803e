// What the benchmark panel's chart builders (bench_charts.cpp: the creation, latency and stage charts, in the
// Okabe-Ito palette with pale compared runs) share with the rest of the panel (bench_panel.cpp).
#pragma once

#include <QList>
#include <QPair>
#include <QString>

#include "bench_runner.h"

namespace kiln::studio {

// Rows of both reports by (mode, driver cache): the current report's order, then rows only the earlier one has.
// Either report may be null.
QList<QPair<QString, QString>> benchRowKeys(const bridge::BenchReport* current, const bridge::BenchReport* comparison);

}  // namespace kiln::studio
