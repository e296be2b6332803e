#include "package_view.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMetaObject>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <thread>

#include "table_widgets.h"

namespace kiln::studio {

struct PackageView::Outcome {
  int generation = 0;
  Result<ModelPackage> package = Status(StatusCode::FAIL, "not read");
  Result<PackageChoice> choice = Status(StatusCode::FAIL, "not judged");
};

namespace {

QString sizeText(uint64_t bytes) { return QLocale().formattedDataSize(static_cast<qint64>(bytes)); }

uint64_t variantBytes(const PackageVariant& variant) {
  uint64_t bytes = 0;
  for (const auto& file : variant.files) bytes += file.size;
  return bytes;
}

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
  auto* item = new QTableWidgetItem(text);
  if (!tip.isEmpty()) item->setToolTip(tip);
  return item;
}

}  // namespace

PackageView::PackageView(QWidget* parent) : QWidget(parent, Qt::Window), alive_(std::make_shared<bool>(true)) {
  setObjectName(QStringLiteral("packageView"));
  setWindowTitle(tr("Model package"));
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("packageTitle"));
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("packageChoice"));
  summary_->setWordWrap(true);
  table_ = makeListTable(QStringLiteral("packageVariants"),
                         {QString(), tr("Variant"), tr("Precision"), tr("Size"), tr("On this machine"), tr("Compiled for")});
  reasons_ = new QPlainTextEdit(this);
  reasons_->setObjectName(QStringLiteral("packageReasons"));
  reasons_->setReadOnly(true);
  reasons_->setPlaceholderText(tr("Select a variant to see why it was or was not chosen"));
  reasons_->setMaximumHeight(120);
  openVariant_ = new QPushButton(tr("Open Variant's Graph"), this);
  openVariant_->setObjectName(QStringLiteral("openVariant"));
  openSource_ = new QPushButton(tr("Open Source Model"), this);
  openSource_->setObjectName(QStringLiteral("openSource"));
  auto* buttons = new QHBoxLayout;
  buttons->addStretch();
  buttons->addWidget(openSource_);
  buttons->addWidget(openVariant_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  layout->addWidget(reasons_);
  layout->addLayout(buttons);
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto rows = table_->selectionModel()->selectedRows();
    selectRow(rows.isEmpty() ? -1 : rows.front().row());
  });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    selectRow(row);
    openSelectedVariant();
  });
  connect(openVariant_, &QPushButton::clicked, this, &PackageView::openSelectedVariant);
  connect(openSource_, &QPushButton::clicked, this, &PackageView::openSource);
  openVariant_->setEnabled(false);
  openSource_->setEnabled(false);
  resize(900, 420);
}

PackageView::~PackageView() { *alive_ = false; }

void PackageView::open(const QString& folder) {
  folder_ = folder;
  busy_ = true;
  const int generation = ++generation_;
  package_.reset();
  choice_.reset();
  table_->setRowCount(0);
  reasons_->clear();
  title_->setText(tr("Reading %1...").arg(QDir::toNativeSeparators(folder)));
  summary_->clear();
  openVariant_->setEnabled(false);
  openSource_->setEnabled(false);
  std::weak_ptr<bool> alive = alive_;
  std::thread([this, alive, generation, path = folder.toStdString()] {
    auto outcome = std::make_shared<Outcome>();
    outcome->generation = generation;
    outcome->package = readModelPackage(path);
    if (outcome->package.isOk()) outcome->choice = choosePackageVariant(*outcome->package, SessionOptions());
    // Posted to the application object, which outlives the view: the view may be gone by the time it runs.
    QMetaObject::invokeMethod(QCoreApplication::instance(), [this, alive, outcome] {
      if (alive.expired() || outcome->generation != generation_) return;
      present(*outcome);
    }, Qt::QueuedConnection);
  }).detach();
}

void PackageView::present(Outcome& outcome) {
  busy_ = false;
  if (!outcome.package.isOk()) {
    title_->setText(tr("%1 cannot be read as a model package").arg(QDir::toNativeSeparators(folder_)));
    summary_->setText(QString::fromStdString(outcome.package.status().toString()));
    emit failed(summary_->text());
    return;
  }
  package_ = *outcome.package;
  const ModelPackage& package = *package_;
  title_->setText(tr("<b>%1</b>: component %2, %n variant(s), %3 on disk, %4 of it the source weights every variant "
                     "reads", nullptr, static_cast<int>(package.variants.size()))
                      .arg(QFileInfo(folder_).fileName().toHtmlEscaped(), QString::fromStdString(package.component).toHtmlEscaped(),
                           sizeText(package.totalBytes), sizeText(package.sharedBytes)));
  if (outcome.choice.isOk()) {
    choice_ = *outcome.choice;
    summary_->setText(choice_->chosen >= 0
                          ? tr("A session on %1 loads <b>%2</b>.").arg(QString::fromStdString(choice_->against).toHtmlEscaped(),
                                                                       QString::fromStdString(package.variants[static_cast<size_t>(choice_->chosen)].name))
                          : tr("No variant fits %1: a session compiles the packaged source.")
                                .arg(QString::fromStdString(choice_->against.empty() ? std::string("this machine") : choice_->against).toHtmlEscaped()));
  } else {
    summary_->setText(tr("Not judged on this machine: %1").arg(QString::fromStdString(outcome.choice.status().toString()).toHtmlEscaped()));
  }
  table_->setRowCount(static_cast<int>(package.variants.size()));
  for (int row = 0; row < table_->rowCount(); ++row) {
    const PackageVariant& variant = package.variants[static_cast<size_t>(row)];
    const PackageVariantJudgement* judged = choice_ && row < static_cast<int>(choice_->judged.size()) ? &choice_->judged[static_cast<size_t>(row)] : nullptr;
    const bool chosen = choice_ && choice_->chosen == row;
    table_->setItem(row, Chosen, cell(chosen ? QStringLiteral("\u2605") : QString(), chosen ? tr("A session here loads this variant") : QString()));
    table_->setItem(row, Variant, cell(QString::fromStdString(variant.name), QString::fromStdString(variant.ctxModel)));
    table_->setItem(row, Precision, cell(QString::fromStdString(variant.precision)));
    table_->setItem(row, Size, cell(sizeText(variantBytes(variant))));
    table_->setItem(row, Here, cell(judged ? QString::fromStdString(compiledModelCompatibilityName(judged->state)) : tr("not judged")));
    table_->setItem(row, Device, cell(QString::fromStdString(variant.device),
                                      variant.profile.empty() ? tr("the live device") : tr("profile %1").arg(QString::fromStdString(variant.profile))));
  }
  table_->resizeColumnsToContents();
  openSource_->setEnabled(!package.sourceModel.empty());
  if (choice_ && choice_->chosen >= 0) table_->selectRow(choice_->chosen);
  emit judged();
}

QString PackageView::summaryText() const { return summary_->text(); }
QString PackageView::reasonsText() const { return reasons_->toPlainText(); }

void PackageView::selectRow(int row) {
  openVariant_->setEnabled(package_ && row >= 0 && row < static_cast<int>(package_->variants.size()));
  if (!openVariant_->isEnabled()) {
    reasons_->clear();
    return;
  }
  if (table_->currentRow() != row) table_->selectRow(row);
  QStringList lines;
  if (choice_ && row < static_cast<int>(choice_->judged.size())) {
    const PackageVariantJudgement& judged = choice_->judged[static_cast<size_t>(row)];
    lines << (choice_->chosen == row ? tr("Chosen: %1").arg(QString::fromStdString(choice_->summary))
                                     : tr("%1: %2%3").arg(QString::fromStdString(judged.variant),
                                                          QString::fromStdString(compiledModelCompatibilityName(judged.state)),
                                                          judged.precisionMatches ? QString() : tr(", not the precision asked for")));
    for (const auto& reason : judged.reasons) lines << QStringLiteral("- ") + QString::fromStdString(reason);
  }
  lines << tr("Compile identity %1").arg(QString::fromStdString(package_->variants[static_cast<size_t>(row)].compileIdentity));
  reasons_->setPlainText(lines.join(QLatin1Char('\n')));
}

void PackageView::openSelectedVariant() {
  const auto rows = table_->selectionModel()->selectedRows();
  if (!package_ || rows.isEmpty()) return;
  const auto& variant = package_->variants[static_cast<size_t>(rows.front().row())];
  emit openRequested(QDir(folder_).filePath(QString::fromStdString(variant.ctxModel)));
}

void PackageView::openSource() {
  if (!package_ || package_->sourceModel.empty()) return;
  emit openRequested(QDir(folder_).filePath(QString::fromStdString(package_->sourceModel)));
}

}  // namespace kiln::studio
