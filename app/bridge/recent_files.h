// RecentFiles: the studio's "Open Recent" list, kept in QSettings so it survives restarts. Newest first, no
// duplicates (paths are compared after making them absolute and clean), at most `capacity` entries.
#pragma once

#include <QSettings>
#include <QString>
#include <QStringList>

namespace kiln::bridge {

class RecentFiles {
 public:
  // `settings` must outlive this object; `key` names the list inside it.
  explicit RecentFiles(QSettings& settings, QString key = QStringLiteral("recentFiles"), int capacity = 10);

  // Moves `path` to the front (adding it when new) and saves.
  void add(const QString& path);
  // Removes `path` (e.g. after it failed to open) and saves.
  void remove(const QString& path);
  void clear();
  // The list as saved, newest first; files that no longer exist are left out (but kept in the settings, since a
  // network share or removable drive may come back).
  QStringList existingFiles() const;
  QStringList all() const { return files_; }

 private:
  void save();

  QSettings& settings_;
  QString key_;
  int capacity_;
  QStringList files_;
};

// The menu text of entry `index` (0-based) of the recent list: "&1 model.onnx  (~/models/v2)", the file name then its
// folder (the home folder as ~, a long folder shortened at its start), so two models of one name can be told apart.
QString recentFileLabel(int index, const QString& path);

}  // namespace kiln::bridge
