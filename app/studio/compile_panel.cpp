#include "compile_panel.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <exception>

#include "kiln/compiler.h"
#include "log_hub.h"
#include "value_format.h"

namespace kiln::studio {

namespace {

constexpr int kLogBlockLimit = 5000;  // lines kept in the log view; a long autotune log must not grow without end
constexpr int kBarRange = 1000;

enum StageColumn { StageName = 0, StageProgress = 1, StageElapsed = 2 };

// The overall bar, in thousandths, from one engine event. The engine reports stages, not one overall fraction, so
// the bar gives each stage a share: load, optimize and partition 5% each, the partitions 80% (each partition an
// equal slice, split 60/40 between its glslang and pipeline stages), writing the files the last 5%.
int overallFor(ProgressStep step, qint64 done, qint64 total, int& partitionIndex, int& partitionCount) {
  const double f = total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 0.0;
  auto at = [](double permille) { return static_cast<int>(permille); };
  const double slice = 800.0 / std::max(partitionCount, 1);
  const double base = 150 + slice * std::min(partitionIndex, std::max(partitionCount - 1, 0));
  switch (step) {
    case ProgressStep::LOAD: return at(50 * f);
    case ProgressStep::OPTIMIZE: return at(50 + 50 * f);
    case ProgressStep::PARTITION: return at(100 + 50 * f);
    case ProgressStep::COMPILE:
      partitionIndex = static_cast<int>(done);
      partitionCount = static_cast<int>(total);
      return at(150 + 800 * f);
    case ProgressStep::GLSLANG: return at(base + slice * 0.6 * f);
    case ProgressStep::PIPELINES: return at(base + slice * (0.6 + 0.4 * f));
    case ProgressStep::WRITE: return at(950 + 50 * f);
    case ProgressStep::AUTOTUNE:
    case ProgressStep::OTHER: break;
  }
  return -1;  // a step the bar has no share for: it stays where it is
}

// The engine's top-level steps in the order it runs them (-1 for the others). It reports most of them only as they
// start ("optimize 0/1"): a later one starting means the earlier ones are done.
int pipelinePosition(ProgressStep step) {
  switch (step) {
    case ProgressStep::LOAD: return 0;
    case ProgressStep::OPTIMIZE: return 1;
    case ProgressStep::PARTITION: return 2;
    case ProgressStep::COMPILE: return 3;
    case ProgressStep::WRITE: return 4;
    default: return -1;
  }
}

QString formatMs(double ms) {
  return ms < 10 ? QStringLiteral("%1 ms").arg(ms, 0, 'f', 2)
                 : (ms < 10000 ? QStringLiteral("%1 ms").arg(ms, 0, 'f', 1)
                               : QStringLiteral("%1 s").arg(ms / 1000, 0, 'f', 2));
}

QString levelColor(int level) {
  switch (static_cast<LogLevel>(level)) {
    case LogLevel::Trace:
    case LogLevel::Debug: return QStringLiteral("#7f8c8d");
    case LogLevel::Warn: return QStringLiteral("#b9770e");
    case LogLevel::Error: return QStringLiteral("#c0392b");
    default: return {};
  }
}

QPushButton* browseButton(const QString& objectName) {
  auto* button = new QPushButton(QObject::tr("Browse…"));
  button->setObjectName(objectName);
  return button;
}

QWidget* row(std::initializer_list<QWidget*> widgets, int stretchIndex = 0) {
  auto* holder = new QWidget;
  auto* layout = new QHBoxLayout(holder);
  layout->setContentsMargins(0, 0, 0, 0);
  int i = 0;
  for (QWidget* widget : widgets) layout->addWidget(widget, i++ == stretchIndex ? 1 : 0);
  return holder;
}

}  // namespace

CompilePanel::CompilePanel(QWidget* parent)
    : QWidget(parent),
      job_(new bridge::CompileJob(this)),
      sourceEdit_(new QLineEdit),
      outputEdit_(new QLineEdit),
      embedCheck_(new QCheckBox(tr("Embed the context binary in the model (embed mode 1)"))),
      prefixEdit_(new QLineEdit),
      extInitializersEdit_(new QLineEdit),
      extThresholdSpin_(new QSpinBox),
      errorIfNoNodesCheck_(new QCheckBox(tr("Fail when no node compiles (instead of writing the plain model)"))),
      errorIfExistsCheck_(new QCheckBox(tr("Fail when the output model exists (instead of overwriting it)"))),
      liveDeviceRadio_(new QRadioButton(tr("Device"))),
      deviceCombo_(new QComboBox),
      profileRadio_(new QRadioButton(tr("Profile"))),
      profileEdit_(new QLineEdit),
      profileBrowse_(browseButton(QStringLiteral("profileBrowseButton"))),
      optimizationCombo_(new QComboBox),
      autotuneCheck_(new QCheckBox(tr("Autotune: time candidate kernels and keep the fastest"))),
      shapesEdit_(new QLineEdit),
      compileButton_(new QPushButton(tr("Compile"))),
      statusLabel_(new QLabel),
      overallBar_(new QProgressBar),
      stageTree_(new QTreeWidget),
      logLevelCombo_(new QComboBox),
      logView_(new QPlainTextEdit),
      resultView_(new QLabel) {
  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter->addWidget(buildForm());
  splitter->addWidget(buildProgressArea());
  splitter->setStretchFactor(0, 2);
  splitter->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);

  connect(compileButton_, &QPushButton::clicked, this, [this] { isRunning() ? cancelCompile() : startCompile(); });
  connect(job_, &bridge::CompileJob::progress, this, &CompilePanel::onProgress);
  connect(job_, &bridge::CompileJob::finished, this, &CompilePanel::onFinished);
  connect(job_, &bridge::CompileJob::failed, this, &CompilePanel::onFailed);
  connect(bridge::LogHub::instance(), &bridge::LogHub::line, this, &CompilePanel::onLogLine);
  listDevicesInBackground();
}

CompilePanel::~CompilePanel() {
  // The job first: its destructor cancels and waits, while this panel can still receive what it posts.
  delete job_;
  job_ = nullptr;
  if (deviceThread_) deviceThread_->wait();
}

QWidget* CompilePanel::buildForm() {
  sourceEdit_->setObjectName(QStringLiteral("sourcePathEdit"));
  sourceEdit_->setReadOnly(true);
  sourceEdit_->setPlaceholderText(tr("Open a model first"));
  outputEdit_->setObjectName(QStringLiteral("outputPathEdit"));
  outputEdit_->setPlaceholderText(tr("<model folder>/<stem>_ctx.onnx"));
  QPushButton* outputBrowse = browseButton(QStringLiteral("outputBrowseButton"));
  connect(outputBrowse, &QPushButton::clicked, this, &CompilePanel::browseOutput);
  embedCheck_->setObjectName(QStringLiteral("embedModeCheck"));
  prefixEdit_->setObjectName(QStringLiteral("prefixEdit"));
  prefixEdit_->setPlaceholderText(tr("none: EPContext nodes keep their partition names"));
  extInitializersEdit_->setObjectName(QStringLiteral("extInitializersEdit"));
  extInitializersEdit_->setPlaceholderText(tr("file relative to the output model (CPU-fallback initializers)"));
  extThresholdSpin_->setObjectName(QStringLiteral("extThresholdSpin"));
  extThresholdSpin_->setRange(0, INT_MAX);
  extThresholdSpin_->setValue(1024);
  extThresholdSpin_->setSuffix(tr(" B"));
  extThresholdSpin_->setToolTip(tr("Smallest initializer that goes to the external file"));
  errorIfNoNodesCheck_->setObjectName(QStringLiteral("errorIfNoNodesCheck"));
  errorIfExistsCheck_->setObjectName(QStringLiteral("errorIfExistsCheck"));

  liveDeviceRadio_->setObjectName(QStringLiteral("liveDeviceRadio"));
  profileRadio_->setObjectName(QStringLiteral("profileRadio"));
  liveDeviceRadio_->setChecked(true);
  auto* targetGroup = new QButtonGroup(this);
  targetGroup->addButton(liveDeviceRadio_);
  targetGroup->addButton(profileRadio_);
  connect(liveDeviceRadio_, &QRadioButton::toggled, this, &CompilePanel::updateTargetMode);
  deviceCombo_->setObjectName(QStringLiteral("deviceCombo"));
  deviceCombo_->addItem(tr("Default (the first GPU, else lavapipe)"), QString());
  deviceCombo_->addItem(tr("Listing devices…"));
  deviceCombo_->setItemData(1, 0, Qt::UserRole - 1);  // disabled placeholder until the list arrives
  profileEdit_->setObjectName(QStringLiteral("profileEdit"));
  profileEdit_->setPlaceholderText(tr("device profile JSON (kiln devices --profile)"));
  connect(profileBrowse_, &QPushButton::clicked, this, &CompilePanel::browseProfile);

  optimizationCombo_->setObjectName(QStringLiteral("optimizationCombo"));
  optimizationCombo_->addItem(tr("Default (basic)"), QString());
  for (const char* level : {"none", "basic", "all"}) {
    optimizationCombo_->addItem(QString::fromLatin1(level), QString::fromLatin1(level));
  }
  autotuneCheck_->setObjectName(QStringLiteral("autotuneCheck"));
  shapesEdit_->setObjectName(QStringLiteral("shapesEdit"));
  shapesEdit_->setPlaceholderText(tr("NAME=1x3x640x640 … fixes an input's free dimensions"));
  shapesEdit_->setToolTip(tr("As kiln compile --shape; several separated by spaces, commas or ';'"));

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Source model"), sourceEdit_);
  form->addRow(tr("Output model"), row({outputEdit_, outputBrowse}));
  form->addRow(tr("Embed mode"), embedCheck_);
  form->addRow(tr("Node name prefix"), prefixEdit_);
  form->addRow(tr("External initializers"), row({extInitializersEdit_, extThresholdSpin_}));
  form->addRow(tr("Flags"), errorIfNoNodesCheck_);
  form->addRow(QString(), errorIfExistsCheck_);
  form->addRow(tr("Target"), row({liveDeviceRadio_, deviceCombo_}, 1));
  form->addRow(QString(), row({profileRadio_, profileEdit_, profileBrowse_}, 1));
  form->addRow(tr("Optimization level"), optimizationCombo_);
  form->addRow(tr("Autotune"), autotuneCheck_);
  form->addRow(tr("Shapes"), shapesEdit_);
  auto* options = new QGroupBox(tr("Compile options"));
  options->setLayout(form);

  compileButton_->setObjectName(QStringLiteral("compileButton"));
  compileButton_->setDefault(true);
  compileButton_->setMinimumWidth(compileButton_->fontMetrics().horizontalAdvance(tr("Cancelling…")) + 32);
  statusLabel_->setObjectName(QStringLiteral("statusLabel"));
  statusLabel_->setWordWrap(true);
  statusLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* column = new QWidget;
  auto* layout = new QVBoxLayout(column);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(options);
  auto* buttonRow = new QHBoxLayout;
  buttonRow->addWidget(compileButton_);
  buttonRow->addWidget(statusLabel_, 1);
  layout->addLayout(buttonRow);
  layout->addWidget(buildResultArea(), 1);

  formWidgets_ = {outputEdit_,         outputBrowse,        embedCheck_,     prefixEdit_,       extInitializersEdit_,
                  extThresholdSpin_,   errorIfNoNodesCheck_, errorIfExistsCheck_, liveDeviceRadio_, deviceCombo_,
                  profileRadio_,       profileEdit_,        profileBrowse_,  optimizationCombo_, autotuneCheck_,
                  shapesEdit_};
  updateTargetMode();

  auto* scroll = new QScrollArea;
  scroll->setWidget(column);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  return scroll;
}

QWidget* CompilePanel::buildProgressArea() {
  overallBar_->setObjectName(QStringLiteral("overallProgress"));
  overallBar_->setRange(0, kBarRange);
  overallBar_->setValue(0);
  overallBar_->setFormat(tr("%p%"));

  stageTree_->setObjectName(QStringLiteral("stageTree"));
  stageTree_->setColumnCount(3);
  stageTree_->setHeaderLabels({tr("Stage"), tr("Done / total"), tr("Elapsed")});
  stageTree_->setRootIsDecorated(false);
  stageTree_->setUniformRowHeights(true);
  stageTree_->setAlternatingRowColors(true);
  stageTree_->header()->setStretchLastSection(false);
  stageTree_->header()->setSectionResizeMode(StageName, QHeaderView::Stretch);
  stageTree_->header()->setSectionResizeMode(StageProgress, QHeaderView::ResizeToContents);
  stageTree_->header()->setSectionResizeMode(StageElapsed, QHeaderView::ResizeToContents);

  auto* progressBox = new QGroupBox(tr("Progress"));
  auto* progressLayout = new QVBoxLayout(progressBox);
  progressLayout->addWidget(overallBar_);
  progressLayout->addWidget(stageTree_);

  logLevelCombo_->setObjectName(QStringLiteral("logLevelCombo"));
  logLevelCombo_->addItem(tr("Debug"), static_cast<int>(LogLevel::Debug));
  logLevelCombo_->addItem(tr("Info"), static_cast<int>(LogLevel::Info));
  logLevelCombo_->addItem(tr("Warning"), static_cast<int>(LogLevel::Warn));
  logLevelCombo_->addItem(tr("Error"), static_cast<int>(LogLevel::Error));
  logLevelCombo_->setCurrentIndex(1);
  connect(logLevelCombo_, &QComboBox::currentIndexChanged, this, [this] {
    // The hub's level is process-wide; lower it when this view wants more, never raise it (another panel may want
    // debug lines). This view filters for itself in appendLog.
    const auto level = static_cast<LogLevel>(logLevelCombo_->currentData().toInt());
    if (level < bridge::LogHub::instance()->minimumLevel()) bridge::LogHub::instance()->setMinimumLevel(level);
  });
  logView_->setObjectName(QStringLiteral("logView"));
  logView_->setReadOnly(true);
  logView_->setMaximumBlockCount(kLogBlockLimit);
  logView_->setLineWrapMode(QPlainTextEdit::NoWrap);
  logView_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* clearLog = new QPushButton(tr("Clear"));
  connect(clearLog, &QPushButton::clicked, logView_, &QPlainTextEdit::clear);
  auto* logBox = new QGroupBox(tr("Engine log"));
  auto* logLayout = new QVBoxLayout(logBox);
  auto* logBar = new QHBoxLayout;
  logBar->addWidget(new QLabel(tr("Level")));
  logBar->addWidget(logLevelCombo_);
  logBar->addStretch(1);
  logBar->addWidget(clearLog);
  logLayout->addLayout(logBar);
  logLayout->addWidget(logView_);

  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(progressBox);
  splitter->addWidget(logBox);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);
  return splitter;
}

QWidget* CompilePanel::buildResultArea() {
  resultView_->setObjectName(QStringLiteral("resultView"));
  resultView_->setTextFormat(Qt::RichText);
  resultView_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  resultView_->setWordWrap(true);
  resultView_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  resultView_->setText(tr("<i>No compile yet.</i>"));
  auto* resultScroll = new QScrollArea;
  resultScroll->setWidget(resultView_);
  resultScroll->setWidgetResizable(true);
  resultScroll->setFrameShape(QFrame::NoFrame);
  auto* resultBox = new QGroupBox(tr("Result"));
  auto* resultLayout = new QVBoxLayout(resultBox);
  resultLayout->addWidget(resultScroll);

  return resultBox;
}

void CompilePanel::setSourceModel(const QString& path) {
  const QString previous = sourceEdit_->text();
  if (path == previous) return;
  outputChoice_.remember(previous, outputEdit_->text());
  modelFields_.remember(previous, {{QStringLiteral("shapes"), shapesEdit_->text()},
                                   {QStringLiteral("prefix"), prefixEdit_->text()},
                                   {QStringLiteral("external"), extInitializersEdit_->text()}});
  sourceEdit_->setText(path);
  sourceEdit_->setToolTip(path);
  outputEdit_->setText(outputChoice_.outputFor(path));
  const bridge::ModelFieldsMemory::Fields fields = modelFields_.fieldsFor(path);
  shapesEdit_->setText(fields.value(QStringLiteral("shapes")));
  prefixEdit_->setText(fields.value(QStringLiteral("prefix")));
  extInitializersEdit_->setText(fields.value(QStringLiteral("external")));
  if (!isRunning()) resetForSource(path);
}

// The previous model's compile, progress and error do not describe this one.
void CompilePanel::resetForSource(const QString& path) {
  stageTree_->clear();
  stages_.clear();
  activeStage_.clear();
  overallBar_->setValue(0);
  lastError_.clear();
  statusLabel_->setStyleSheet(QString());
  statusLabel_->clear();
  resultSource_.clear();
  resultView_->setText(path.isEmpty() ? tr("<i>No compile yet.</i>")
                                      : tr("<i>No compile of %1 yet.</i>").arg(QFileInfo(path).fileName().toHtmlEscaped()));
}

// Existing outputs are replaced only when the user says so; files this panel's last compile wrote are its own.
bool CompilePanel::mayReplace(const app::CompileSettings& settings) {
  if (settings.errorIfOutputExists) return true;  // the engine refuses an existing output itself
  QStringList existing = bridge::existingCompileOutputs(settings);
  if (QString::fromStdString(settings.inputModel) == writtenFor_) {
    existing.removeIf([this](const QString& file) { return lastWritten_.contains(file); });
  }
  if (existing.isEmpty()) return true;
  if (replaceQuestion_) return replaceQuestion_(existing);
  QMessageBox box(QMessageBox::Warning, tr("Replace existing files?"),
                  tr("Compiling %1 replaces files that exist already:").arg(QFileInfo(QString::fromStdString(settings.inputModel)).fileName()),
                  QMessageBox::Cancel, this);
  box.setInformativeText(existing.join(QLatin1Char('\n')));
  QPushButton* replace = box.addButton(tr("Replace"), QMessageBox::DestructiveRole);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  return box.clickedButton() == replace;
}

QString CompilePanel::sourceModel() const { return sourceEdit_->text(); }

bool CompilePanel::isRunning() const { return job_ && job_->isRunning(); }

QString CompilePanel::lastError() const { return lastError_; }

app::CompileSettings CompilePanel::settings() const {
  app::CompileSettings settings;
  settings.inputModel = sourceEdit_->text().toStdString();
  settings.outputModel = outputEdit_->text().trimmed().toStdString();
  settings.embedMode = embedCheck_->isChecked();
  settings.nodeNamePrefix = prefixEdit_->text().trimmed().toStdString();
  settings.externalInitializersFile = extInitializersEdit_->text().trimmed().toStdString();
  settings.externalThreshold = extThresholdSpin_->value();
  settings.errorIfNoNodesCompiled = errorIfNoNodesCheck_->isChecked();
  settings.errorIfOutputExists = errorIfExistsCheck_->isChecked();
  if (profileRadio_->isChecked()) {
    settings.targetProfile = profileEdit_->text().trimmed().toStdString();
  } else {
    settings.device = deviceCombo_->currentData().toString().toStdString();
  }
  settings.optimizationLevel = optimizationCombo_->currentData().toString().toStdString();
  settings.autotune = autotuneCheck_->isChecked();
  if (auto shapes = bridge::parseShapeList(shapesEdit_->text()); shapes.isOk()) {
    for (const QString& entry : *shapes) settings.shapes.push_back(entry.toStdString());
  }
  return settings;
}

void CompilePanel::startCompile() {
  if (isRunning()) return;
  // Form errors are caught here, in the form's words, before a thread starts; the engine checks the rest.
  QString problem;
  if (sourceEdit_->text().isEmpty()) {
    problem = tr("no source model: open a model first");
  } else if (outputEdit_->text().trimmed().isEmpty()) {
    problem = tr("no output model path");
  } else if (profileRadio_->isChecked() && profileEdit_->text().trimmed().isEmpty()) {
    problem = tr("choose a device profile JSON, or compile for a live device");
  } else if (auto shapes = bridge::parseShapeList(shapesEdit_->text()); !shapes.isOk()) {
    problem = QString::fromStdString(shapes.status().message());
  }
  if (!problem.isEmpty()) {
    const QString code = QString::fromLatin1(statusCodeName(StatusCode::INVALID_ARGUMENT));
    showError(code, problem);
    emit compileFailed(code, problem);
    return;
  }
  const app::CompileSettings chosen = settings();
  if (!mayReplace(chosen)) {
    const QString why = tr("kept the existing files; choose another output path or replace them");
    statusLabel_->setStyleSheet(QString());
    statusLabel_->setText(tr("Not compiled: %1").arg(why));
    emit compileFailed(QString::fromLatin1(statusCodeName(StatusCode::CANCELLED)), why);
    return;
  }

  stageTree_->clear();
  stages_.clear();
  activeStage_.clear();
  overallPermille_ = 0;
  lastEventMs_ = 0;
  partitionIndex_ = partitionCount_ = 0;
  overallBar_->setValue(0);
  compilingSource_ = QString::fromStdString(chosen.inputModel);
  resultSource_ = compilingSource_;
  resultView_->setText(tr("<i>Compiling %1…</i>").arg(QFileInfo(compilingSource_).fileName().toHtmlEscaped()));
  lastError_.clear();
  statusLabel_->setStyleSheet(QString());
  statusLabel_->setText(tr("Compiling %1…").arg(QFileInfo(sourceEdit_->text()).fileName()));
  writeMarker(tr("compile %1 → %2").arg(sourceEdit_->text(), outputEdit_->text()));
  clock_.start();
  if (!job_->start(chosen)) return;  // cannot happen: isRunning() was false
  setRunning(true);
}

void CompilePanel::cancelCompile() {
  if (!isRunning()) return;
  job_->cancel();
  compileButton_->setEnabled(false);
  compileButton_->setText(tr("Cancelling…"));
  statusLabel_->setText(tr("Cancelling: the engine stops at its next step and removes its temporary files…"));
}

void CompilePanel::setRunning(bool running) {
  compileButton_->setText(running ? tr("Cancel") : tr("Compile"));
  compileButton_->setEnabled(true);
  for (QWidget* widget : formWidgets_) widget->setEnabled(!running);
  if (!running) updateTargetMode();
}

void CompilePanel::showError(const QString& code, const QString& message) {
  lastError_ = code + QStringLiteral(": ") + message;
  statusLabel_->setStyleSheet(QStringLiteral("color: #c0392b;"));
  statusLabel_->setText(lastError_);
}

void CompilePanel::updateTargetMode() {
  const bool live = liveDeviceRadio_->isChecked();
  deviceCombo_->setEnabled(live && !isRunning());
  profileEdit_->setEnabled(!live && !isRunning());
  profileBrowse_->setEnabled(!live && !isRunning());
}

void CompilePanel::browseOutput() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Write the EPContext model to"), outputEdit_->text(),
                                                    tr("ONNX models (*.onnx)"));
  if (!path.isEmpty()) outputEdit_->setText(path);
}

void CompilePanel::browseProfile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Device profile"), profileEdit_->text(),
                                                    tr("Device profiles (*.json);;All files (*)"));
  if (!path.isEmpty()) profileEdit_->setText(path);
}

void CompilePanel::listDevicesInBackground() {
  // Enumerating Vulkan devices loads the driver (lavapipe: LLVM), tens of milliseconds: not on the UI thread.
  devices_ = std::make_shared<Result<std::vector<VulkanDeviceDescription>>>(Status(StatusCode::FAIL, "not listed"));
  deviceThread_ = QThread::create([result = devices_] {
    try {
      *result = listVulkanDevices();
    } catch (const std::exception& e) {
      *result = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
    }
  });
  deviceThread_->setObjectName(QStringLiteral("kiln-list-devices"));
  deviceThread_->setParent(this);
  connect(deviceThread_, &QThread::finished, this, &CompilePanel::showDevices);
  deviceThread_->start();
}

void CompilePanel::showDevices() {
  deviceThread_->wait();
  while (deviceCombo_->count() > 1) deviceCombo_->removeItem(1);
  if (devices_->isOk()) {
    for (const VulkanDeviceDescription& device : devices_->value()) {
      deviceCombo_->addItem(tr("%1: %2 (%3)")
                                .arg(device.index)
                                .arg(QString::fromStdString(device.name), QString::fromLatin1(kiln::vulkanDeviceTypeName(device.type))),
                            QString::number(device.index));
      deviceCombo_->setItemData(deviceCombo_->count() - 1,
                                tr("Vulkan %1, %2 %3")
                                    .arg(QString::fromStdString(device.apiVersion),
                                         QString::fromStdString(device.driverName),
                                         QString::fromStdString(device.driverInfo)),
                                Qt::ToolTipRole);
    }
  } else {
    const QString why = QString::fromStdString(devices_->status().toString());
    deviceCombo_->addItem(tr("No Vulkan device: %1").arg(why));
    deviceCombo_->setItemData(1, 0, Qt::UserRole - 1);
    deviceCombo_->setItemData(1, why, Qt::ToolTipRole);
  }
  devicesListed_ = true;
  emit devicesReady();
}

void CompilePanel::refreshStageElapsed(StageRow& row) {
  const qint64 end = row.endedMs >= 0 ? row.endedMs : clock_.elapsed();
  row.item->setText(StageElapsed, formatMs(static_cast<double>(end - row.startedMs)));
}

void CompilePanel::closeActiveStage() {
  if (activeStage_.isEmpty()) return;
  auto it = stages_.find(activeStage_);
  if (it != stages_.end()) {
    it->endedMs = clock_.elapsed();
    refreshStageElapsed(*it);
  }
  activeStage_.clear();
}

void CompilePanel::onProgress(const QString& stage, qint64 done, qint64 total, int step) {
  // A stage's elapsed time runs from its first event until another stage reports; a stage that reports again (the
  // "compile" stage around each partition's glslang and pipeline stages) resumes, so it spans its partitions.
  if (stage != activeStage_) {
    closeActiveStage();
    activeStage_ = stage;
  }
  auto it = stages_.find(stage);
  if (it == stages_.end()) {
    StageRow row;
    row.item = new QTreeWidgetItem(stageTree_, QStringList{stage});
    row.step = static_cast<ProgressStep>(step);
    row.item->setTextAlignment(StageProgress, Qt::AlignRight | Qt::AlignVCenter);
    row.item->setTextAlignment(StageElapsed, Qt::AlignRight | Qt::AlignVCenter);
    // Parallel stages report their first event when the first item is done ("glslang 1/11"): their work began at
    // the previous event, not now.
    row.startedMs = done > 0 ? lastEventMs_ : clock_.elapsed();
    it = stages_.insert(stage, row);
    stageTree_->scrollToItem(row.item);
    markEarlierStagesDone(row.step);
  }
  it->endedMs = -1;
  it->done = done;
  it->total = total;
  it->item->setText(StageProgress, total > 0 ? tr("%1 / %2").arg(done).arg(total) : QString::number(done));
  refreshStageElapsed(*it);
  lastEventMs_ = clock_.elapsed();
  const int overall = overallFor(static_cast<ProgressStep>(step), done, total, partitionIndex_, partitionCount_);
  overallPermille_ = std::max(overallPermille_, overall);
  overallBar_->setValue(overallPermille_);
  if (!job_->isCancelling()) {
    statusLabel_->setText(total > 0 ? tr("%1 %2/%3").arg(stage).arg(done).arg(total) : stage);
  }
  emit progressed(stage, done, total);
}

void CompilePanel::markEarlierStagesDone(ProgressStep step) {
  const int position = pipelinePosition(step);
  if (position < 0) return;
  for (StageRow& row : stages_) {
    const int earlier = pipelinePosition(row.step);
    if (earlier >= 0 && earlier < position && (row.total <= 0 || row.done < row.total)) {
      row.item->setText(StageProgress, tr("done"));
    }
  }
}

void CompilePanel::onFinished(const bridge::CompileSummary& summary) {
  closeActiveStage();
  for (StageRow& row : stages_) {
    if (row.total <= 0 || row.done < row.total) row.item->setText(StageProgress, tr("done"));
  }
  setRunning(false);
  overallBar_->setValue(kBarRange);
  lastError_.clear();
  statusLabel_->setStyleSheet(QString());
  statusLabel_->setText(summary.epContextNodes > 0
                            ? tr("Compiled: %n EPContext node(s) in %1", nullptr, summary.epContextNodes)
                                  .arg(formatMs(summary.wallMs))
                            : tr("Nothing runs on the Vulkan EP: wrote the optimized model (%1)")
                                  .arg(formatMs(summary.wallMs)));

  resultSource_ = compilingSource_;
  writtenFor_ = compilingSource_;
  lastWritten_.clear();
  for (const bridge::CompiledFile& file : summary.files) lastWritten_ << QFileInfo(file.path).absoluteFilePath();
  QString html = tr("<p>Compile of <b>%1</b>%2</p>")
                     .arg(compilingSource_.toHtmlEscaped(),
                          compilingSource_ == sourceEdit_->text() ? QString() : tr(" (not the open model)"));
  html += tr("<p><b>%1</b><br>%n EPContext node(s)", nullptr, summary.epContextNodes)
              .arg(summary.outputModelPath.toHtmlEscaped());
  if (!summary.binaryPath.isEmpty()) html += tr(", binary %1").arg(QFileInfo(summary.binaryPath).fileName().toHtmlEscaped());
  if (summary.epContextNodes > 0 && summary.binaryPath.isEmpty()) html += tr(", binary embedded");
  html += QStringLiteral("</p><p><b>%1</b></p><table cellspacing='0' cellpadding='2'>").arg(tr("Files written"));
  for (const bridge::CompiledFile& file : summary.files) {
    html += QStringLiteral("<tr><td>%1</td><td align='right'>&nbsp;&nbsp;%2</td></tr>")
                .arg(file.path.toHtmlEscaped(), bridge::formatByteSize(file.bytes));
  }
  html += QStringLiteral("</table><p><b>%1</b></p><table cellspacing='0' cellpadding='2'>").arg(tr("Timings"));
  for (const auto& [key, ms] : summary.timingsMs) {
    html += QStringLiteral("<tr><td>%1</td><td align='right'>&nbsp;&nbsp;%2</td></tr>").arg(key, formatMs(ms));
  }
  html += QStringLiteral("</table><p><b>%1</b></p><table cellspacing='0' cellpadding='2'>").arg(tr("Counters"));
  for (const auto& [key, value] : summary.counters) {
    html += QStringLiteral("<tr><td>%1</td><td align='right'>&nbsp;&nbsp;%2</td></tr>").arg(key).arg(value);
  }
  html += QStringLiteral("</table>");
  resultView_->setText(html);
  writeMarker(tr("compiled %1").arg(summary.outputModelPath));
  emit compiled(summary.outputModelPath);
}

void CompilePanel::onFailed(const QString& code, const QString& message) {
  closeActiveStage();
  setRunning(false);
  showError(code, message);
  resultView_->setText(code == QLatin1String("CANCELLED")
                           ? tr("<i>Cancelled; nothing was written.</i>")
                           : tr("<i>Failed; nothing was written.</i>"));
  writeLog(static_cast<int>(LogLevel::Error), lastError_);
  emit compileFailed(code, message);
}

void CompilePanel::onLogLine(int level, const QString& text) {
  // The hub is process-wide: only lines logged while this panel compiles belong to its log (they are queued ahead
  // of the job's finished signal, so none is cut off).
  if (!isRunning()) return;
  if (level < logLevelCombo_->currentData().toInt()) return;
  writeLog(level, text);
}

void CompilePanel::writeLog(int level, const QString& text) {
  const QString color = levelColor(level);
  const QString body = (bridge::LogHub::levelName(level) + QStringLiteral(": ") + text).toHtmlEscaped();
  logView_->appendHtml(color.isEmpty() ? body : QStringLiteral("<span style='color:%1'>%2</span>").arg(color, body));
}

void CompilePanel::writeMarker(const QString& text) {
  logView_->appendHtml(QStringLiteral("<b>%1</b>").arg(text.toHtmlEscaped()));
}

}  // namespace kiln::studio
