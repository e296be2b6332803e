#include "recent_files.h"

#include <QDir>
#include <QFileInfo>

namespace kiln::bridge {

namespace {

QString canonicalForm(const QString& path) { return QDir::cleanPath(QFileInfo(path).absoluteFilePath()); }

}  // namespace

RecentFiles::RecentFiles(QSettings& settings, QString key, int capacity)
    : settings_(settings), key_(std::move(key)), capacity_(capacity) {
  for (const QString& path : settings_.value(key_).toStringList()) {
    const QString clean = canonicalForm(path);
    if (!clean.isEmpty() && !files_.contains(clean) && files_.size() < capacity_) files_.append(clean);
  }
}

void RecentFiles::add(const QString& path) {
  const QString clean = canonicalForm(path);
  files_.removeAll(clean);
  files_.prepend(clean);
  while (files_.size() > capacity_) files_.removeLast();
  save();
}

void RecentFiles::remove(const QString& path) {
  files_.removeAll(canonicalForm(path));
  save();
}

void RecentFiles::clear() {
  files_.clear();
  save();
}

QStringList RecentFiles::existingFiles() const {
  QStringList existing;
  for (const QString& path : files_) {
    if (QFileInfo::exists(path)) existing.append(path);
  }
  return existing;
}

void RecentFiles::save() { settings_.setValue(key_, files_); }

QString recentFileLabel(int index, const QString& path) {
  constexpr int kMostFolderChars = 48;
  const QFileInfo info(path);
  QString folder = QDir::cleanPath(info.absolutePath());
  const QString home = QDir::cleanPath(QDir::homePath());
  if (folder == home || folder.startsWith(home + QLatin1Char('/'))) folder = QLatin1Char('~') + folder.mid(home.size());
  if (folder.size() > kMostFolderChars) folder = QChar(0x2026) + folder.right(kMostFolderChars - 1);
  return QStringLiteral("&%1 %2  (%3)").arg(index + 1).arg(info.fileName(), folder);
}

}  // namespace kiln::bridge
