// Every keyboard shortcut of the studio in one table: the main window registers its menu shortcuts from it (by id),
// and Help ▸ Keyboard Shortcuts lists it. Keys that widgets handle themselves (the graph view's zoom and node
// navigation, the search box's Enter) are entries too, so the dialog shows them; their widgets' key handlers are
// the behaviour, this table is what the user reads.
#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QRect>
#include <QString>
#include <QVector>

class QTableWidget;

namespace kiln::studio {

struct ShortcutEntry {
  QString id;         // "file.open", "view.panel.3", "graph.zoom-in"
  QString area;       // the menu or widget it works in: "File", "Graph"
  QString action;     // what it does, as the user reads it
  QKeySequence keys;  // the key sequence (standard keys resolved for this platform)
  bool registered = false;  // true: the main window registers it as a QAction shortcut; false: a widget handles it
};

// The table, in the order the dialog lists it.
const QVector<ShortcutEntry>& shortcutTable();
// The keys of entry `id`; an empty sequence for an unknown id.
QKeySequence shortcutKeys(const QString& id);

// Help ▸ Keyboard Shortcuts: the table as a read-only, filterable list (area, action, keys).
class ShortcutsDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ShortcutsDialog(QWidget* parent = nullptr);
  // Rows shown (for tests): one per table entry.
  int rowCount() const;
  // Where the Keys column lies in the table's viewport, and the viewport itself (for tests: the keys are in sight).
  QRect keysColumnRect() const;
  QRect tableViewportRect() const;

 private:
  QTableWidget* table_;
};

}  // namespace kiln::studio
