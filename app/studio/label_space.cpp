#include "label_space.h"

#include <cmath>

namespace kiln::studio {

namespace {

constexpr double kCell = 256;  // grid cells, in scene units

}  // namespace

template <typename Visit>
void LabelSpace::forCells(const QRectF& rect, const Visit& visit) {
  for (auto x = static_cast<qint64>(std::floor(rect.left() / kCell)); x <= std::floor(rect.right() / kCell); ++x) {
    for (auto y = static_cast<qint64>(std::floor(rect.top() / kCell)); y <= std::floor(rect.bottom() / kCell); ++y) {
      visit((static_cast<quint64>(x) << 32) ^ static_cast<quint32>(y));
    }
  }
}

void LabelSpace::occupy(const QRectF& rect, double weight) {
  forCells(rect, [&](quint64 key) { grid_[key].push_back({rect, weight}); });
}

double LabelSpace::cost(const QRectF& rect) const {
  double total = 0;
  forCells(rect, [&](quint64 key) {
    for (const Box& other : grid_.value(key)) {
      const QRectF overlap = other.rect.intersected(rect);
      if (!overlap.isEmpty()) total += overlap.width() * overlap.height() * other.weight;
    }
  });
  return total;
}

QRectF LabelSpace::place(const QVector<QPointF>& anchors, const QSizeF& size, double weight, bool* covers,
                         bool takeCovering) {
  QRectF best;
  double bestCost = -1;
  const double w = size.width(), h = size.height();
  for (const QPointF& point : anchors) {
    // Right of the point, left of it, then a step further out and a line up or down.
    for (double dy : {0.0, -h - 2, h + 2}) {
      for (double left : {point.x() + 4, point.x() - 4 - w, point.x() + w / 2 + 12, point.x() - 1.5 * w - 12}) {
        const QRectF rect(QPointF(left, point.y() + dy - h / 2), size);
        if (!bounds_.isNull() && !bounds_.contains(rect)) continue;
        const double c = cost(rect);
        if (bestCost < 0 || c < bestCost) {
          bestCost = c;
          best = rect;
        }
        if (c <= 0) break;
      }
      if (bestCost == 0) break;
    }
    if (bestCost == 0) break;
  }
  if (covers) *covers = bestCost != 0;
  if (!best.isNull() && (bestCost == 0 || takeCovering)) occupy(best, weight);
  return best;
}

}  // namespace kiln::studio
