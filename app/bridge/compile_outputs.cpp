#include "compile_outputs.h"

#include <QDir>
#include <QFileInfo>

#include "kiln/compiler.h"

namespace kiln::bridge {

namespace {

QString defaultOutput(const QString& source) {
  return source.isEmpty() ? QString() : QString::fromStdString(kiln::defaultCtxModelPath(source.toStdString()));
}

QString sourceKey(const QString& source) { return QFileInfo(source).absoluteFilePath(); }

}  // namespace

QStringList compileOutputFiles(const app::CompileSettings& settings) {
  const QString output = settings.outputModel.empty() ? defaultOutput(QString::fromStdString(settings.inputModel))
                                                      : QString::fromStdString(settings.outputModel);
  if (output.isEmpty()) return {};
  const QFileInfo model(output);
  QStringList files{model.absoluteFilePath()};
  if (!settings.embedMode) {
    files << QFileInfo(QString::fromStdString(kiln::defaultContextBinaryPath(output.toStdString()))).absoluteFilePath();
  }
  if (!settings.externalInitializersFile.empty()) {
    files << QFileInfo(model.absoluteDir(), QString::fromStdString(settings.externalInitializersFile)).absoluteFilePath();
  }
  return files;
}

QStringList existingCompileOutputs(const app::CompileSettings& settings) {
  QStringList existing;
  for (const QString& file : compileOutputFiles(settings)) {
    if (QFileInfo::exists(file)) existing << file;
  }
  return existing;
}

QString OutputPathChoice::outputFor(const QString& source) const {
  if (source.isEmpty()) return {};
  return typed_.value(sourceKey(source), defaultOutput(source));
}

void OutputPathChoice::remember(const QString& source, const QString& output) {
  if (source.isEmpty()) return;
  const QString trimmed = output.trimmed();
  if (trimmed.isEmpty() || trimmed == defaultOutput(source)) {
    typed_.remove(sourceKey(source));
  } else {
    typed_.insert(sourceKey(source), trimmed);
  }
}

ModelFieldsMemory::Fields ModelFieldsMemory::fieldsFor(const QString& source) const {
  if (source.isEmpty()) return {};
  return typed_.value(sourceKey(source));
}

void ModelFieldsMemory::remember(const QString& source, const Fields& fields) {
  if (source.isEmpty()) return;
  Fields kept;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (!it.value().trimmed().isEmpty()) kept.insert(it.key(), it.value());
  }
  if (kept.isEmpty()) {
    typed_.remove(sourceKey(source));
  } else {
    typed_.insert(sourceKey(source), kept);
  }
}

}  // namespace kiln::bridge
