// LabelSpace: what is already drawn where on the graph scene (node boxes, captions, texts), on a grid, so that a
// text placed later (a tensor shape on an edge, a host↔device transfer badge) goes where it covers nothing: each
// candidate spot costs the area it shares with what is there, more where that is drawn above it and would hide it.
#pragma once

#include <QHash>
#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QVector>

namespace kiln::studio {

class LabelSpace {
 public:
  void clear() { grid_.clear(); }
  // Where placed boxes must stay (the scene rect: Fit shows no more); null for anywhere.
  void setBounds(const QRectF& bounds) { bounds_ = bounds; }
  // Marks `rect` (scene coordinates) as taken; `weight` scales what covering it costs.
  void occupy(const QRectF& rect, double weight);
  // What covering `rect` costs: 0 where nothing is taken.
  double cost(const QRectF& rect) const;
  // The first of the boxes of `size` beside `anchors` (right of each, then left, then further out and a line up or
  // down; anchors in order) inside the bounds that costs nothing, taken with `weight`; else the cheapest, taken
  // only with `takeCovering` (null when every box leaves the bounds). Sets *covers to whether it covers something.
  QRectF place(const QVector<QPointF>& anchors, const QSizeF& size, double weight, bool* covers = nullptr,
               bool takeCovering = false);

 private:
  struct Box {
    QRectF rect;
    double weight;
  };
  template <typename Visit>
  static void forCells(const QRectF& rect, const Visit& visit);

  QHash<quint64, QVector<Box>> grid_;
  QRectF bounds_;
};

}  // namespace kiln::studio
