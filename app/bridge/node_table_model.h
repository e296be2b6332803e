// NodeTableModel: one row per top-level node of a ModelInfo, in topological order, with its outputs' types.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <array>
#include <memory>
#include <vector>

#include "kiln/model_info.h"

namespace kiln::bridge {

class NodeTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, OpType, Domain, Inputs, Outputs, OutputTypes, ColumnCount };

  explicit NodeTableModel(QObject* parent = nullptr);

  // Shows the nodes of `info`; nullptr empties the table.
  void setModelInfo(std::shared_ptr<const ModelInfo> info);
  const ModelInfo* modelInfo() const { return info_.get(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  // Horizontal: column titles. Vertical: the node's topological index, kept when a proxy sorts or filters.
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // Cells are rendered once per model so that sorting and filtering do not rebuild strings.
  struct Row {
    std::array<QString, ColumnCount> cells;
    QString inputsToolTip;
    QString outputsToolTip;
  };
  Row makeRow(const NodeInfo& node) const;
  QString describeValue(const std::string& name) const;

  std::shared_ptr<const ModelInfo> info_;
  std::vector<Row> rows_;
};

}  // namespace kiln::bridge
