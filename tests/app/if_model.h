// The small control-flow model of tests/tools/make_if_model.py (If bodies, a nested If, outer-scope values,
// Constant nodes), generated into a test's temporary folder with Debian's python3 and python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

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

}  // namespace kiln::testing
