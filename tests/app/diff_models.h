// The two small models of tests/tools/make_diff_models.py (B: one Conv attribute changed, one initializer changed,
// one node added), generated into a test's temporary folder with Debian's python3 and python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

#include <utility>

namespace kiln::testing {

// Writes `dir`/diff_a.onnx and `dir`/diff_b.onnx and returns their paths; empty paths with `error` set when they
// cannot be generated.
inline std::pair<QString, QString> makeDiffModels(const QString& dir, QString* error) {
  QProcess python;
  python.start(QStringLiteral("/usr/bin/python3"),
               {QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_diff_models.py"), dir});
  if (!python.waitForFinished(60000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    *error = QStringLiteral("make_diff_models.py failed: ") + QString::fromLocal8Bit(python.readAllStandardError()) +
             python.errorString();
    return {};
  }
  const QString a = dir + QStringLiteral("/diff_a.onnx"), b = dir + QStringLiteral("/diff_b.onnx");
  if (!QFileInfo::exists(a) || !QFileInfo::exists(b)) return {};
  return {a, b};
}

}  // namespace kiln::testing
