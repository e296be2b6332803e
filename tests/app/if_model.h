// The small control-flow model of tests/tools/make_if_model.py (If bodies, a nested If, outer-scope values,
// Constant nodes), generated into a test's temporary folder with Debian's python3 and python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

namespace kiln::testing {

// Writes the model to `dir`/if_model.onnx and returns its path; "" with `error` set when it cannot be generated.
inline QString makeIfModel(const QString& dir, QString* error) {
  const QString out = dir + QStringLiteral("/if_model.onnx");
  QProcess python;
  python.start(QStringLiteral("/usr/bin/python3"),
               {QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_if_model.py"), out});
  if (!python.waitForFinished(60000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    *error = QStringLiteral("make_if_model.py failed: ") + QString::fromLocal8Bit(python.readAllStandardError()) +
             python.errorString();
    return {};
  }
  return QFileInfo::exists(out) ? out : QString();
}

}  // namespace kiln::testing
