// NodeTableModel: one row per node of a ModelInfo, every graph: the top-level graph's nodes in topological order,
// then each If/Loop/Scan body's (depth-first), with the graph path and its outputs' types.
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
  enum Column { Name, OpType, Domain, Inputs, Outputs, OutputTypes, Graph, ColumnCount };

  explicit NodeTableModel(QObject* parent = nullptr);

  // Shows the nodes of `info`; nullptr empties the table.
  void setModelInfo(std::shared_ptr<const ModelInfo> info);
  const ModelInfo* modelInfo() const { return info_.get(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  // Horizontal: column titles. Vertical: the node's topological index, kept when a proxy sorts or filters.
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  // The graph of source row `row` ("main" or a body's path) and the node's index in that graph's node list.
  QString graphPath(int row) const;
  int nodeIndex(int row) const;

 private:
  // Cells are rendered once per model so that sorting and filtering do not rebuild strings.
  struct Row {
    std::array<QString, ColumnCount> cells;
    QString inputsToolTip;
    QString outputsToolTip;
    int nodeIndex = -1;
  };
  Row makeRow(const NodeInfo& node, const QString& graph, int index) const;
  QString describeValue(const std::string& name) const;

  std::shared_ptr<const ModelInfo> info_;
  std::vector<Row> rows_;
};

}  // namespace kiln::bridge
