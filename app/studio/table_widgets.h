// The studio's read-only list tables (binary inspector sections, compare outputs, merge inputs, model diff changes)
// made one way: whole-row single selection, no row numbers, the last column stretched, headers left-aligned, not
// editable. Each panel adds what is its own (row height, word wrap, alternating colours, editing).
#pragma once

#include <QString>
#include <QStringList>

class QTableWidget;

namespace kiln::studio {

QTableWidget* makeListTable(const QString& objectName, const QStringList& headers);

}  // namespace kiln::studio
