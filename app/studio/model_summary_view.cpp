#include "model_summary_view.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLocale>
#include <QPushButton>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "value_format.h"

namespace kiln::studio {

namespace {

QTreeWidgetItem* addSection(QTreeWidget* tree, const QString& title) {
  auto* item = new QTreeWidgetItem(tree, {title});
  QFont font = item->font(0);
  font.setBold(true);
  item->setFont(0, font);
  item->setFirstColumnSpanned(true);
  return item;
}

QTreeWidgetItem* addProperty(QTreeWidgetItem* section, const QString& name, const QString& value,
                             const QString& toolTip = {}) {
  auto* item = new QTreeWidgetItem(section, {name, value});
  item->setToolTip(0, name);
  item->setToolTip(1, toolTip.isEmpty() ? value : toolTip);
  return item;
}

void addValues(QTreeWidgetItem* section, const std::vector<ValueMetadata>& values) {
  for (const ValueMetadata& value : values) {
    addProperty(section, QString::fromStdString(value.name), bridge::formatValueType(value));
  }
}

}  // namespace

ModelSummaryView::ModelSummaryView(QWidget* parent) : QTreeWidget(parent) {
  setColumnCount(2);
  setHeaderLabels({tr("Property"), tr("Value")});
  setRootIsDecorated(true);
  setUniformRowHeights(true);
  setAlternatingRowColors(true);
  setSelectionMode(QAbstractItemView::SingleSelection);
  header()->setStretchLastSection(true);
  header()->setSectionResizeMode(0, QHeaderView::Interactive);
}

void ModelSummaryView::showModel(const ModelInfo* info) {
  clear();
  shownPath_.clear();
  if (!info) return;
  shownPath_ = QString::fromStdString(info->path);
  const QLocale locale;

  QTreeWidgetItem* model = addSection(this, tr("Model"));
  const QString path = QString::fromStdString(info->path);
  addProperty(model, tr("File"), QFileInfo(path).fileName(), path);
  addProperty(model, tr("IR version"), QString::number(info->irVersion));
  addProperty(model, tr("Producer"),
              info->producerName.empty() ? tr("(not recorded)") : QString::fromStdString(info->producerName));
  for (const auto& [domain, version] : info->opsetImports) {
    addProperty(model, tr("Opset %1").arg(bridge::formatDomain(domain)), QString::number(version));
  }

  addValues(addSection(this, tr("Inputs (%1)").arg(info->inputs.size())), info->inputs);
  addValues(addSection(this, tr("Outputs (%1)").arg(info->outputs.size())), info->outputs);

  QTreeWidgetItem* weights = addSection(this, tr("Initializers"));
  addProperty(weights, tr("Count"), locale.toString(static_cast<qlonglong>(info->initializerCount)));
  addProperty(weights, tr("Size"), bridge::formatByteSize(info->initializerBytes),
              tr("%1 bytes").arg(locale.toString(static_cast<qlonglong>(info->initializerBytes))));

  // Operator histogram, most frequent first: the quickest read of what a model is made of.
  // Every graph counts: a model whose work sits in If/Loop/Scan bodies is not "2 nodes".
  std::map<std::string, int> counts;
  size_t total = 0;
  auto count = [&](const std::vector<NodeInfo>& nodes) {
    for (const NodeInfo& node : nodes) ++counts[node.domain.empty() ? node.opType : node.domain + "." + node.opType];
    total += nodes.size();
  };
  count(info->nodes);
  for (const SubgraphInfo& body : info->subgraphs) count(body.nodes);
  std::vector<std::pair<std::string, int>> ops(counts.begin(), counts.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!info->subgraphs.empty()) {
    QTreeWidgetItem* graphs = addSection(this, tr("Graphs (%1)").arg(info->subgraphs.size() + 1));
    auto nodes = [this](size_t count) { return count == 1 ? tr("1 node") : tr("%1 nodes").arg(count); };
    addProperty(graphs, QStringLiteral("main"), nodes(info->nodes.size()));
    for (const SubgraphInfo& body : info->subgraphs) {
      // The owner and the attribute ("If_0.else_branch"); the whole path is the tooltip.
      const QString path = QString::fromStdString(body.path);
      addProperty(graphs, QString::fromStdString(body.ownerNode + "." + body.attribute), nodes(body.nodes.size()), path)
          ->setToolTip(0, path);
    }
  }
  QTreeWidgetItem* operators = addSection(this, tr("Operators (%1)").arg(total));
  for (const auto& [op, count] : ops) addProperty(operators, QString::fromStdString(op), QString::number(count));

  expandAll();
  // Dozens of bodies (Silero VAD has 50) would push the operators out of sight: listed, but folded.
  for (int i = 0; i < topLevelItemCount(); ++i) {
    if (topLevelItem(i)->text(0).startsWith(tr("Graphs")) && topLevelItem(i)->childCount() > 8) topLevelItem(i)->setExpanded(false);
  }
  resizeColumnToContents(0);
  // Long names never push the values out of view.
  setColumnWidth(0, std::min(columnWidth(0), std::max(120, width() * 3 / 5)));
}

void ModelSummaryView::showCompiledFrom(const QString& modelPath, const QString& sourcePath) {
  if (modelPath.isEmpty() || modelPath != shownPath_ || sourcePath.isEmpty() || topLevelItemCount() == 0) return;
  QTreeWidgetItem* model = topLevelItem(0);
  for (int i = 0; i < model->childCount(); ++i) {
    if (model->child(i)->text(0) == tr("Compiled from")) return;  // shown already
  }
  const bool present = QFileInfo(sourcePath).isFile();
  const QString name = QFileInfo(sourcePath).fileName();
  auto* row = new QTreeWidgetItem({tr("Compiled from"), present ? name : tr("%1 (not found)").arg(name)});
  row->setToolTip(1, present ? sourcePath : tr("The compile record names %1, which is not there").arg(sourcePath));
  model->insertChild(1, row);  // after the file
  if (!present) return;
  auto* open = new QTreeWidgetItem({QString()});
  model->insertChild(2, open);
  auto* button = new QPushButton(tr("Open Source Beside"));
  button->setObjectName(QStringLiteral("openSourceButton"));
  button->setToolTip(tr("Open %1 with this compiled model beside it (selecting a node highlights its counterpart)")
                         .arg(sourcePath));
  connect(button, &QPushButton::clicked, this, [this, sourcePath] { emit openSourceRequested(sourcePath); });
  setItemWidget(open, 1, button);
}

QString ModelSummaryView::valueOf(const QString& section, const QString& property) const {
  for (int i = 0; i < topLevelItemCount(); ++i) {
    const QTreeWidgetItem* top = topLevelItem(i);
    if (!top->text(0).startsWith(section)) continue;
    for (int j = 0; j < top->childCount(); ++j) {
      if (top->child(j)->text(0) == property) return top->child(j)->text(1);
    }
  }
  return {};
}

}  // namespace kiln::studio
