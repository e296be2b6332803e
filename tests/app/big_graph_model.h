// A big synthetic model (tests/tools/make_big_graph.py, a chain of residual blocks), generated into a test's
// temporary folder with Debian's python3 and python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

namespace kiln::testing {

// Writes a model of about `nodes` nodes to `dir`/`fileName` and returns its path; "" with `error` set when it cannot
// be generated.
inline QString makeBigGraphModel(const QString& dir, const QString& fileName, int nodes, QString* error) {
  const QString out = dir + QLatin1Char('/') + fileName;
  QProcess python;
  python.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_big_graph.py"),
                                                    out, QStringLiteral("--nodes"), QString::number(nodes)});
  if (!python.waitForFinished(120000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    *error = QStringLiteral("make_big_graph.py failed: ") + QString::fromLocal8Bit(python.readAllStandardError()) +
             python.errorString();
    return {};
  }
  return QFileInfo::exists(out) ? out : QString();
}

}  // namespace kiln::testing
