// A layout that places its widgets left to right and wraps to a new line when the width runs out (the graph legend:
// in a narrow panel, beside the compiled graph, its chips wrap instead of being cut). Height follows width.
#pragma once

#include <QLayout>
#include <QList>

namespace kiln::studio {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(int horizontalSpacing = 12, int verticalSpacing = 2);
  ~FlowLayout() override;

  void addItem(QLayoutItem* item) override;
  int count() const override { return static_cast<int>(items_.size()); }
  QLayoutItem* itemAt(int index) const override { return items_.value(index); }
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override { return {}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return place(QRect(0, 0, width, 0), false); }
  // The widest item: the layout never asks for the sum of its items' widths.
  QSize minimumSize() const override;
  QSize sizeHint() const override { return minimumSize(); }
  void setGeometry(const QRect& rect) override;

 private:
  // Lays the items out in `rect` (moving them when `apply`); returns the height used.
  int place(const QRect& rect, bool apply) const;
  QList<QLayoutItem*> items_;
  int horizontalSpacing_, verticalSpacing_;
};

}  // namespace kiln::studio
