// Finds the `kiln` command-line program, which the studio runs for work that must happen in fresh processes
// (kiln bench measures process start-up and driver caches, so it cannot run inside the studio).
#pragma once

#include <QString>
#include <QStringList>

namespace kiln::bridge {

struct KilnCliLocation {
  QString path;        // absolute path of an executable kiln, or "" when none was found
  QString error;       // why none was found (names every place tried), or ""
  QStringList tried;   // the candidates looked at, in order

  bool found() const { return !path.isEmpty(); }
};

// Looks, in order, at: $KILN_CLI (when set it is the only candidate: a wrong path is an error, not a reason to run
// some other kiln), kiln beside this executable (an installed bin/ folder), then PATH.
KilnCliLocation locateKilnCli();

}  // namespace kiln::bridge
