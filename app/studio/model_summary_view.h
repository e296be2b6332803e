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
  // For a ctx model on display (`modelPath`, as showModel was given it): a "Compiled from" row naming the source its
  // compile record gives (`sourcePath`, absolute) and a button that asks to open it beside the ctx model; the row
  // says so when the source is gone. Ignored for another model than the one shown.
  void showCompiledFrom(const QString& modelPath, const QString& sourcePath);
  // The value shown for `property` under `section` (e.g. "Model", "IR version"), or an empty string; for tests.
  QString valueOf(const QString& section, const QString& property) const;

 signals:
  void openSourceRequested(const QString& sourcePath);

 private:
  QString shownPath_;
};

}  // namespace kiln::studio
