// The small model of tests/tools/make_function_model.py (a call of the model-local function custom:ScaleShift
// with an attribute reference), generated into a test's temporary folder with Debian's python3 and
// python3-onnx.
#pragma once

#include <QFileInfo>
#include <QProcess>
#include <QString>

namespace kiln::testing {

// Writes the model to `dir`/function_model.onnx and returns its path; "" with `error` set when it cannot be
// made. `selfCall`: the function calls itself (function_self_call.onnx), a model no engine can run.
inline QString makeFunctionModel(const QString& dir, QString* error, bool selfCall = false) {
  const QString out =
      dir + (selfCall ? QStringLiteral("/function_self_call.onnx") : QStringLiteral("/function_model.onnx"));
  QStringList args{QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_function_model.py"), out};
  if (selfCall) args << QStringLiteral("--self-call");
  QProcess python;
  python.start(QStringLiteral("/usr/bin/python3"), args);
  if (!python.waitForFinished(60000) || python.exitStatus() != QProcess::NormalExit ||
      python.exitCode() != 0) {
    *error = QStringLiteral("make_function_model.py failed: ") +
             QString::fromLocal8Bit(python.readAllStandardError()) + python.errorString();
    return {};
  }
  return QFileInfo::exists(out) ? out : QString();
}

}  // namespace kiln::testing
