// GraphPanel's input shapes: the "Input shapes" row under the legend and the re-inference it starts (the engine's
// shape inference through kiln::inspectModel with input shapes, on the loader's worker). Kept apart from
// graph_panel.cpp, whose hooks call in here.
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

#include <algorithm>

#include "graph_loader.h"
#include "graph_panel.h"
#include "graph_view.h"

namespace kiln::studio {

namespace {

// True when an input has a dimension the model leaves open: only then is there anything to give.
bool hasOpenDimensions(const ModelInfo& info) {
  return std::any_of(info.inputs.begin(), info.inputs.end(), [](const ValueMetadata& input) {
    return !input.hasShape || std::any_of(input.shape.begin(), input.shape.end(),
                                          [](const Dimension& d) { return !d.isFixed(); });
  });
}

}  // namespace

QWidget* GraphPanel::createInputShapesRow() {
  shapesRow_ = new QWidget;
  shapesRow_->setObjectName(QStringLiteral("inputShapesRow"));
  auto* row = new QHBoxLayout(shapesRow_);
  row->setContentsMargins(6, 0, 6, 0);
  row->setSpacing(4);
  auto* title = new QLabel(tr("Input shapes:"));
  shapesEdit_ = new QLineEdit;
  shapesEdit_->setObjectName(QStringLiteral("inputShapesEdit"));
  shapesEdit_->setMaximumWidth(300);
  shapesEdit_->setPlaceholderText(tr("x=1x3x640x640"));
  shapesEdit_->setToolTip(tr("Fix input shapes (NAME=1x3x640x640, as kiln --shape; several separated by spaces, commas or ';') and Enter: the engine's "
                             "shape inference then gives concrete dimensions in node details, the Nodes table and "
                             "on edges. '?' marks a dimension the model leaves open."));
  title->setBuddy(shapesEdit_);
  auto* apply = new QToolButton;
  apply->setText(tr("Apply"));
  apply->setToolTip(tr("Infer the shapes with these inputs"));
  auto* reset = new QToolButton;
  reset->setText(tr("Reset"));
  reset->setToolTip(tr("Back to the shapes the model declares"));
  shapesMessage_ = new QLabel;
  shapesMessage_->setObjectName(QStringLiteral("inputShapesMessage"));
  shapesMessage_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the panel
  shapesMessage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  row->addWidget(title);
  row->addWidget(shapesEdit_, 1);
  row->addWidget(apply);
  row->addWidget(reset);
  row->addWidget(shapesMessage_, 2);
  connect(shapesEdit_, &QLineEdit::returnPressed, this, [this] { applyInputShapes(shapesEdit_->text()); });
  connect(apply, &QToolButton::clicked, this, [this] { applyInputShapes(shapesEdit_->text()); });
  connect(reset, &QToolButton::clicked, this, [this] { applyInputShapes(QString()); });
  shapesRow_->hide();  // shown for models whose inputs leave dimensions open
  return shapesRow_;
}

void GraphPanel::resetInputShapes() {
  inputShapes_.clear();
  pendingShapes_.reset();
  shapesMessage_->clear();
  shapesEdit_->clear();
  shapesRow_->hide();
}

bool GraphPanel::applyInputShapes(const QString& text) {
  if (!root_ || path_.isEmpty() || loader_->isBusy()) {
    rejectInputShapes(root_ ? tr("the model is still loading") : tr("no model is open"));
    return false;
  }
  Result<bridge::InputShapes> parsed = bridge::parseInputShapes(text);
  if (!parsed.isOk()) {
    rejectInputShapes(QString::fromStdString(parsed.status().message()));
    return false;
  }
  layout_->cancel();
  pendingShapes_ = std::move(parsed).value();
  shapesGraphPath_ = currentGraphPath();
  statusBeforeShapes_ = status_->text();
  shapesMessage_->setStyleSheet(QString());
  shapesMessage_->setText(tr("Inferring shapes\u2026"));
  status_->setText(tr("Inferring shapes of %1\u2026").arg(QFileInfo(path_).fileName()));
  setBusy(true);
  loader_->load(path_, *pendingShapes_);
  return true;
}

bool GraphPanel::onInputShapesLoaded() {
  const ModelInfo& info = root_->modelInfo();
  if (!pendingShapes_) {  // a model just opened: its declared shapes, ready to be filled in
    shapesEdit_->setText(bridge::declaredInputShapes(info));
    // A compiled (EPContext) model's shapes are the partitions' business: no inference runs on it.
    const auto& nodes = root_->nodes();
    const bool compiled = std::any_of(nodes.begin(), nodes.end(), [](const bridge::GraphNode& n) { return n.epContext; });
    shapesRow_->setVisible(hasOpenDimensions(info) && !compiled);
    return false;
  }
  inputShapes_ = *pendingShapes_;
  pendingShapes_.reset();
  shapesEdit_->setText(inputShapes_.empty() ? bridge::declaredInputShapes(info)
                                            : bridge::formatInputShapes(inputShapes_));
  shapesMessage_->setStyleSheet(QString());
  shapesMessage_->setText(inputShapes_.empty() ? tr("Declared shapes")
                                               : tr("Shapes inferred with %1").arg(bridge::formatInputShapes(inputShapes_)));
  // The graph that was on display, re-inferred.
  std::shared_ptr<const bridge::GraphDocument> target = root_->body(shapesGraphPath_);
  showDocument(target ? target : root_);
  emit inputShapesApplied();
  return true;
}

bool GraphPanel::onInputShapesFailed(const QString& message) {
  if (!pendingShapes_) return false;
  pendingShapes_.reset();
  status_->setText(statusBeforeShapes_);
  rejectInputShapes(message);
  return true;
}

void GraphPanel::rejectInputShapes(const QString& message) {
  shapesMessage_->setStyleSheet(QStringLiteral("color: #d03030;"));  // readable on light and dark backgrounds
  shapesMessage_->setText(tr("Not applied: %1").arg(message));
  shapesMessage_->setToolTip(message);
  emit inputShapesRejected(message);
}

}  // namespace kiln::studio
