// ModelDiffView: two models side by side (Tools ▸ Diff Models): model A's graph on the left with its removed and
// changed nodes coloured, model B's on the right with its added and changed ones, a legend, the list of every change
// (kiln::diffModels, what `kiln diff` prints, as rows: bridge model_diff_rows.h) with Previous and Next (Shift+F7,
// F7), and the selected change's details, A against B. Navigation is synced: a change focuses its node in both
// graphs (opening the If/Loop body it sits in), and a node selected in one graph selects its change, or else its
// counterpart in the other graph. The diff runs on a worker (ModelDiffJob) and each graph loads and lays out on its
// panel's own, so a big model never freezes the window; a model that cannot be read is said in the view.
#pragma once

#include <QString>
#include <QWidget>

#include <array>
#include <memory>

#include "model_diff_rows.h"

class QLabel;
class QTableWidget;
class QToolButton;

namespace kiln::bridge {
class ModelDiffJob;
}

namespace kiln::studio {

class GraphPanel;

class ModelDiffView : public QWidget {
  Q_OBJECT

 public:
  enum Side { A = 0, B = 1 };

  explicit ModelDiffView(QWidget* parent = nullptr);
  ~ModelDiffView() override;

  // Opens `pathA` and `pathB` side by side and diffs them; diffReady() or diffFailed() follows. A newer compare()
  // replaces this one.
  void compare(const QString& pathA, const QString& pathB);
  const QString& pathA() const { return paths_[A]; }
  const QString& pathB() const { return paths_[B]; }

  // Steps to the next or previous change (F7, Shift+F7): selects its row, shows its details and focuses it in both
  // graphs. Next with no change selected goes to the first. False when there is no change in that direction.
  bool next();
  bool previous();
  // Selects change `row` (an index into diff().rows), as a click on its row does; -1 clears the selection.
  void selectRow(int row);
  int currentRow() const;

  // The last diff (no rows before one has finished, or after one failed).
  const bridge::ModelDiffRows& diff() const { return diff_; }
  // What the status line says: "3 changes: ...", "No differences ...", "Comparing ...", or the error.
  QString summaryText() const;
  // True while the diff runs or either graph loads or lays out.
  bool isBusy() const;
  GraphPanel* panel(Side side) const { return panels_[side]; }
  QTableWidget* diffTable() const { return table_; }
  QTableWidget* detailsTable() const { return details_; }

 signals:
  void diffReady();
  void diffFailed(const QString& message);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QWidget* createHeader();
  QWidget* createGraphColumn(Side side);
  QWidget* createChangeList();
  void onDiffFinished(const bridge::ModelDiffRows& diff);
  void onDiffFailed(const QString& code, const QString& message);
  void fillTable();
  void onCurrentRowChanged(int row);
  void showDetails(int row);
  void updateNavigation();
  // Focuses change `row` in `side`'s graph, opening the graph it sits in first (then once that is laid out).
  void focusRow(Side side, int row);
  void applyFocus(Side side, int row);
  void onLaidOut(Side side);
  // A node selected in one graph: its change, or else its counterpart in the other graph.
  void onNodeSelected(Side side, int node);
  void focusCounterpart(Side side, int node);
  // The graph on display on `side` hashed for the diff's rows; rebuilt when another graph or diff is shown.
  struct SideIndex {
    std::shared_ptr<const bridge::GraphDocument> document;
    std::unique_ptr<bridge::DiffNodeIndex> index;
    QHash<int, int> rowOfNode;
  };
  const SideIndex* sideIndex(Side side);
  void showDiffColours(bool on);
  void recolour(Side side);
  void refreshLegend();

  bridge::ModelDiffJob* job_;
  std::array<GraphPanel*, 2> panels_{};
  std::array<QLabel*, 2> captions_{};
  std::array<QString, 2> paths_;
  std::array<int, 2> pendingRow_{-1, -1};
  std::array<SideIndex, 2> indexes_;  // a change to focus once the graph opened for it is laid out
  QLabel* status_ = nullptr;
  QWidget* legend_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* detailsTitle_ = nullptr;
  QTableWidget* details_ = nullptr;
  QToolButton* previousButton_ = nullptr;
  QToolButton* nextButton_ = nullptr;
  QLabel* position_ = nullptr;
  bridge::ModelDiffRows diff_;
  bool diffDone_ = false;
  bool diffColoured_ = false;  // the graphs show the diff's colours (else their EP colours)
  bool syncing_ = false;  // selections made here, not by the user: not synced back
  int origin_ = -1;       // the side whose node selection chose the current row: already shown there
};

}  // namespace kiln::studio
