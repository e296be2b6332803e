// Files the studio's QtTests read and write: a file's bytes, and screenshots saved on request for a person to look
// at the layout (KILN_STUDIO_SCREENSHOTS=folder; unset in CI, so nothing is written there).
#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSize>
#include <QStandardPaths>
#include <QString>
#include <QWidget>

#include "log_hub.h"

namespace kiln::testing {

// The bytes of the file at `path`; empty when it cannot be read.
inline QByteArray fileBytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Saves `widget` as the PNG `name` in $KILN_STUDIO_SCREENSHOTS when that is set, resized to `size` first when
// `size` is valid; does nothing otherwise.
inline void saveScreenshot(QWidget* widget, const QString& name, const QSize& size = {}) {
  const QString folder = qEnvironmentVariable("KILN_STUDIO_SCREENSHOTS");
  if (folder.isEmpty()) return;
  QDir().mkpath(folder);
  if (size.isValid()) widget->resize(size);
  widget->grab().save(QDir(folder).filePath(name));
}

// For a test that opens MainWindows: recent files, window state and theme go to a throw-away place, under the
// application name `test`, cleared; the log hub stops echoing to stderr (the engine's messages would drown QtTest's).
inline void isolateStudioSettings(const QString& test) {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
  QCoreApplication::setApplicationName(test);
  QSettings().clear();
  bridge::LogHub::instance()->setEchoToStderr(false);
}

}  // namespace kiln::testing
