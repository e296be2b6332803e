#include "shortcuts.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kiln::studio {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("Shortcuts", text); }

QVector<ShortcutEntry> buildTable() {
  QVector<ShortcutEntry> t = {
      {QStringLiteral("file.open"), tr("File"), tr("Open a model"), QKeySequence(QKeySequence::Open), true},
      {QStringLiteral("file.reload"), tr("File"), tr("Reload the model"), QKeySequence(QKeySequence::Refresh), true},
      {QStringLiteral("file.inspect-binary"), tr("File"), tr("Inspect a context binary"),
       QKeySequence(Qt::CTRL | Qt::Key_I), true},
      {QStringLiteral("file.quit"), tr("File"), tr("Quit"), QKeySequence(QKeySequence::Quit), true},
  };
  const char* const panels[] = {"Show panel 1 (Graph)", "Show panel 2 (Nodes)", "Show panel 3 (Compile)",
                                "Show panel 4 (Binary)", "Show panel 5 (Benchmark)",
                                "Show panel 6 (when there is one)", "Show panel 7 (when there is one)",
                                "Show panel 8 (when there is one)", "Show panel 9 (when there is one)"};
  for (int i = 0; i < 9; ++i) {
    t.push_back({QStringLiteral("view.panel.%1").arg(i + 1), tr("View"), tr(panels[i]),
                 QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)), true});
  }
  t.push_back({QStringLiteral("view.tensor-shapes"), tr("View"), tr("Tensor shapes on edges (on/off)"),
               QKeySequence(Qt::CTRL | Qt::Key_E), true});
  t += QVector<ShortcutEntry>{
      {QStringLiteral("tools.compile"), tr("Tools"), tr("Compile for Vulkan"), QKeySequence(Qt::CTRL | Qt::Key_B), true},
      {QStringLiteral("tools.cancel-compile"), tr("Tools"), tr("Cancel the compile"),
       QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B), true},
      {QStringLiteral("tools.merge"), tr("Tools"), tr("Merge compiled models"), QKeySequence(Qt::CTRL | Qt::Key_M), true},
      {QStringLiteral("tools.benchmark"), tr("Tools"), tr("Benchmark"), QKeySequence(Qt::CTRL | Qt::Key_R), true},
      {QStringLiteral("tools.diff"), tr("Tools"), tr("Diff two models side by side"), QKeySequence(Qt::CTRL | Qt::Key_D),
       true},
      {QStringLiteral("help.shortcuts"), tr("Help"), tr("Keyboard shortcuts (this list)"),
       QKeySequence(Qt::CTRL | Qt::Key_Slash), true},
      {QStringLiteral("graph.zoom-in"), tr("Graph"), tr("Zoom in (also =)"), QKeySequence(Qt::Key_Plus)},
      {QStringLiteral("graph.zoom-out"), tr("Graph"), tr("Zoom out"), QKeySequence(Qt::Key_Minus)},
      {QStringLiteral("graph.fit"), tr("Graph"),
       tr("Fit: the whole graph, or its top at the smallest scale where labels stay legible (\u2212 zooms out "
          "further)"),
       QKeySequence(Qt::CTRL | Qt::Key_0)},
      {QStringLiteral("graph.wheel-zoom"), tr("Graph"), tr("Zoom with the mouse wheel: Ctrl+wheel"), QKeySequence()},
      {QStringLiteral("graph.next"), tr("Graph"), tr("Select the next node along the edges (consumer)"),
       QKeySequence(Qt::Key_Down)},
      {QStringLiteral("graph.previous"), tr("Graph"), tr("Select the previous node (producer)"), QKeySequence(Qt::Key_Up)},
      {QStringLiteral("graph.sibling-next"), tr("Graph"), tr("Select the next sibling"), QKeySequence(Qt::Key_Right)},
      {QStringLiteral("graph.sibling-previous"), tr("Graph"), tr("Select the previous sibling"),
       QKeySequence(Qt::Key_Left)},
      {QStringLiteral("graph.tab"), tr("Graph"), tr("Walk the graph forward (Shift+Tab: back)"), QKeySequence(Qt::Key_Tab)},
      {QStringLiteral("graph.search-next"), tr("Graph search"), tr("Next match"), QKeySequence(Qt::Key_Return)},
      {QStringLiteral("graph.search-previous"), tr("Graph search"), tr("Previous match"),
       QKeySequence(Qt::SHIFT | Qt::Key_Return)},
      {QStringLiteral("diff.next"), tr("Model diff"), tr("Next change"), QKeySequence(Qt::Key_F7)},
      {QStringLiteral("diff.previous"), tr("Model diff"), tr("Previous change"), QKeySequence(Qt::SHIFT | Qt::Key_F7)},
  };
  return t;
}

}  // namespace

const QVector<ShortcutEntry>& shortcutTable() {
  static const QVector<ShortcutEntry> table = buildTable();
  return table;
}

QKeySequence shortcutKeys(const QString& id) {
  for (const ShortcutEntry& entry : shortcutTable()) {
    if (entry.id == id) return entry.keys;
  }
  return {};
}

ShortcutsDialog::ShortcutsDialog(QWidget* parent) : QDialog(parent), table_(new QTableWidget(this)) {
  setWindowTitle(tr("Keyboard Shortcuts"));
  auto* filter = new QLineEdit(this);
  filter->setPlaceholderText(tr("Filter by action or key"));
  filter->setClearButtonEnabled(true);
  const QVector<ShortcutEntry>& entries = shortcutTable();
  // Keys before the action: the action texts are long, and the keys (what the dialog is for) must never be the
  // column pushed out of sight.
  table_->setColumnCount(3);
  table_->setHorizontalHeaderLabels({tr("Where"), tr("Keys"), tr("Action")});
  table_->setRowCount(static_cast<int>(entries.size()));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  for (int row = 0; row < entries.size(); ++row) {
    const ShortcutEntry& e = entries[row];
    const QString keys = e.keys.isEmpty() ? QStringLiteral("—") : e.keys.toString(QKeySequence::NativeText);
    int column = 0;
    for (const QString& text : {e.area, keys, e.action}) table_->setItem(row, column++, new QTableWidgetItem(text));
  }
  table_->resizeColumnsToContents();
  // The action fills what is left (elided, full text in its tooltip): no sideways scrolling.
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  table_->setWordWrap(false);
  for (int row = 0; row < table_->rowCount(); ++row) table_->item(row, 2)->setToolTip(table_->item(row, 2)->text());
  connect(filter, &QLineEdit::textChanged, this, [this](const QString& text) {
    for (int row = 0; row < table_->rowCount(); ++row) {
      bool match = text.isEmpty();
      for (int c = 0; c < 3 && !match; ++c) match = table_->item(row, c)->text().contains(text, Qt::CaseInsensitive);
      table_->setRowHidden(row, !match);
    }
  });
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(filter);
  layout->addWidget(table_);
  layout->addWidget(buttons);
  resize(560, 520);
}

int ShortcutsDialog::rowCount() const { return table_->rowCount(); }

QRect ShortcutsDialog::keysColumnRect() const {
  const QHeaderView* header = table_->horizontalHeader();
  return {header->sectionViewportPosition(1), 0, header->sectionSize(1), table_->viewport()->height()};
}

QRect ShortcutsDialog::tableViewportRect() const { return table_->viewport()->rect(); }

}  // namespace kiln::studio
