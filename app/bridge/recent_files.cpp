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

}  // namespace kiln::bridge
