// ModelSummaryView: the side panel's property tree for a model (file, IR version, opsets, producer, graph inputs
// and outputs with their types, initializers, operator counts).
#pragma once

#include <QTreeWidget>

#include "kiln/model_info.h"

namespace kiln::studio {

class ModelSummaryView : public QTreeWidget {
  Q_OBJECT

 public:
  explicit ModelSummaryView(QWidget* parent = nullptr);

  // Rebuilds the tree for `info` (nullptr: empty).
  void showModel(const ModelInfo* info);
  // The value shown for `property` under `section` (e.g. "Model", "IR version"), or an empty string; for tests.
  QString valueOf(const QString& section, const QString& property) const;
};

}  // namespace kiln::studio
