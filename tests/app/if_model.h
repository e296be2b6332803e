// The small control-flow model of tests/tools/make_if_model.py (If bodies, a nested If, outer-scope values,
// Constant nodes), generated into a test's temporary folder with Debian's python3 and python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

#include "kiln/compiler.h"
#include "requirements.h"

namespace kiln::testing {

// Writes the model to `dir`/if_model.onnx (`bodiesOnly`: if_bodies_only.onnx, whose main graph is the If alone) and
// returns its path; "" with `error` set when it cannot be generated.
inline QString makeIfModel(const QString& dir, QString* error, bool bodiesOnly = false) {
  const QString out = dir + (bodiesOnly ? QStringLiteral("/if_bodies_only.onnx") : QStringLiteral("/if_model.onnx"));
  QStringList arguments{QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_if_model.py"), out};
  if (bodiesOnly) arguments.insert(1, QStringLiteral("--bodies-only"));
  QProcess python;
  python.start(QStringLiteral("/usr/bin/python3"), arguments);
  if (!python.waitForFinished(60000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    *error = QStringLiteral("make_if_model.py failed: ") + QString::fromLocal8Bit(python.readAllStandardError()) +
             python.errorString();
    return {};
  }
  return QFileInfo::exists(out) ? out : QString();
}

// The If model generated in `dir` and compiled with the default EPs (Vulkan) into `dir`/`ctxName`.
struct CompiledIfModel {
  QString source, ctx, binary;
  QString error;  // why generating or compiling failed ("" when `compiled`)
  bool compiled = false;
};

inline CompiledIfModel compileIfModel(const QString& dir, const QString& ctxName, bool bodiesOnly = false) {
  CompiledIfModel out;
  out.source = makeIfModel(dir, &out.error, bodiesOnly);
  if (out.source.isEmpty()) return out;
  out.ctx = dir + QStringLiteral("/") + ctxName;
  ModelCompilationOptions options;
  options.setInputModelPath(out.source.toStdString()).setOutputModelPath(out.ctx.toStdString());
  const auto compiled = compileModel(options);
  if (!compiled.isOk()) {
    out.error = QStringLiteral("cannot compile: ") + QString::fromStdString(compiled.status().toString());
    return out;
  }
  out.binary = QString::fromStdString(compiled->binaryPath);
  out.compiled = true;
  return out;
}

}  // namespace kiln::testing

// In a QtTest function: compiles the If model into `var` (kiln::testing::CompiledIfModel), failing when it cannot be
// generated, and when it cannot be compiled skipping (failing under KILN_REQUIRE_VULKAN=1).
#define KILN_COMPILE_IF_MODEL(var, dir, ctxName, bodiesOnly)                                      \
  const kiln::testing::CompiledIfModel var = kiln::testing::compileIfModel(dir, ctxName, bodiesOnly); \
  QVERIFY2(!var.source.isEmpty(), qPrintable(var.error));                                          \
  if (!var.compiled) {                                                                              \
    if (kiln::testing::vulkanRequired()) QFAIL(qPrintable(var.error));                             \
    QSKIP(qPrintable(var.error));                                                                   \
  }
