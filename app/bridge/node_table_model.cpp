#include "node_table_model.h"

#include <QStringList>

#include "value_format.h"

namespace kiln::bridge {

namespace {

// An empty input name is how ONNX marks an omitted optional input; show that instead of a blank.
QString valueName(const std::string& name) {
  return name.empty() ? QStringLiteral("(omitted)") : QString::fromStdString(name);
}

}  // namespace

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setModelInfo(std::shared_ptr<const ModelInfo> info) {
  beginResetModel();
  info_ = std::move(info);
  rows_.clear();
  if (info_) {
    rows_.reserve(info_->nodes.size());
    const QString main = QStringLiteral("main");
    for (size_t i = 0; i < info_->nodes.size(); ++i) rows_.push_back(makeRow(info_->nodes[i], main, static_cast<int>(i)));
    for (const SubgraphInfo& body : info_->subgraphs) {
      const QString path = QString::fromStdString(body.path);
      for (size_t i = 0; i < body.nodes.size(); ++i) rows_.push_back(makeRow(body.nodes[i], path, static_cast<int>(i)));
    }
  }
  endResetModel();
}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return row.cells[static_cast<size_t>(index.column())];
    case Qt::ToolTipRole:
      if (index.column() == Inputs) return row.inputsToolTip;
      if (index.column() == Outputs || index.column() == OutputTypes) return row.outputsToolTip;
      return row.cells[static_cast<size_t>(index.column())];
    default:
      return {};
  }
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section;
  switch (section) {
    case Name: return tr("Name");
    case OpType: return tr("Op type");
    case Domain: return tr("Domain");
    case Inputs: return tr("Inputs");
    case Outputs: return tr("Outputs");
    case OutputTypes: return tr("Output types");
    case Graph: return tr("Graph");
    default: return {};
  }
}

QString NodeTableModel::graphPath(int row) const {
  return row >= 0 && row < rowCount() ? rows_[static_cast<size_t>(row)].cells[Graph] : QString();
}

int NodeTableModel::nodeIndex(int row) const {
  return row >= 0 && row < rowCount() ? rows_[static_cast<size_t>(row)].nodeIndex : -1;
}

NodeTableModel::Row NodeTableModel::makeRow(const NodeInfo& node, const QString& graph, int index) const {
  Row row;
  row.cells[Graph] = graph;
  row.nodeIndex = index;
  row.cells[Name] = QString::fromStdString(node.name);
  row.cells[OpType] = QString::fromStdString(node.opType);
  row.cells[Domain] = formatDomain(node.domain);

  QStringList inputs, inputTips, outputs, outputTypes, outputTips;
  for (const std::string& name : node.inputs) {
    inputs << valueName(name);
    inputTips << (name.empty() ? valueName(name) : valueName(name) + QStringLiteral(": ") + describeValue(name));
  }
  for (const std::string& name : node.outputs) {
    outputs << valueName(name);
    outputTypes << (name.empty() ? QStringLiteral("-") : describeValue(name));
    outputTips << valueName(name) + QStringLiteral(": ") + outputTypes.back();
  }
  row.cells[Inputs] = inputs.join(QStringLiteral(", "));
  row.cells[Outputs] = outputs.join(QStringLiteral(", "));
  row.cells[OutputTypes] = outputTypes.join(QStringLiteral(", "));
  row.inputsToolTip = inputTips.join(QLatin1Char('\n'));
  row.outputsToolTip = outputTips.join(QLatin1Char('\n'));
  return row;
}

// The value's type and shape when shape inference or the model declared one, "?" when nothing is known.
QString NodeTableModel::describeValue(const std::string& name) const {
  const auto it = info_->values.find(name);
  return it == info_->values.end() ? QStringLiteral("?") : formatValueType(it->second);
}

}  // namespace kiln::bridge
