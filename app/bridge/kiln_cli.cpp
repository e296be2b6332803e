#include "kiln_cli.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "build_tree.h"

namespace kiln::bridge {
namespace {

bool isExecutableFile(const QString& path) {
  const QFileInfo info(path);
  return info.isFile() && info.isExecutable();
}

}  // namespace

KilnCliLocation locateKilnCli() {
  KilnCliLocation location;
  const QString fromEnvironment = qEnvironmentVariable("KILN_CLI");
  if (!fromEnvironment.isEmpty()) {
    location.tried << fromEnvironment;
    if (isExecutableFile(fromEnvironment)) {
      location.path = QFileInfo(fromEnvironment).absoluteFilePath();
    } else {
      location.error = QCoreApplication::translate("kiln::bridge", "KILN_CLI names '%1', which is not an executable file")
                           .arg(fromEnvironment);
    }
    return location;
  }

  QStringList candidates;
  // Installed side by side: bin/kiln-studio and bin/kiln; in a build tree, the kiln that kiln-build-tree.conf names
  // (app/common/build_tree.h). applicationDirPath needs a QCoreApplication.
  if (QCoreApplication::instance()) {
    candidates << QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("kiln"));
    const std::string built = app::buildTreeSetting(QCoreApplication::applicationFilePath().toStdString(), "kiln_cli");
    if (!built.empty()) candidates << QString::fromStdString(built);
  }
  for (const QString& candidate : candidates) {
    location.tried << candidate;
    if (isExecutableFile(candidate)) {
      location.path = QFileInfo(candidate).absoluteFilePath();
      return location;
    }
  }
  const QString onPath = QStandardPaths::findExecutable(QStringLiteral("kiln"));
  location.tried << QStringLiteral("PATH");
  if (!onPath.isEmpty()) {
    location.path = onPath;
    return location;
  }
  location.error = QCoreApplication::translate("kiln::bridge",
                                               "cannot find the kiln command-line program (looked at %1); install it "
                                               "beside kiln-studio or set KILN_CLI to its path")
                       .arg(location.tried.join(QStringLiteral(", ")));
  return location;
}

}  // namespace kiln::bridge
