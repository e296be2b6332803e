// What the graph QtTests share: a node's index by name, and waiting for a GraphPanel's layout (every layout runs on
// the panel's worker thread, so a test waits for layoutReady).
#pragma once

#include <QSignalSpy>
#include <QString>

#include <functional>

#include "graph_document.h"
#include "graph_panel.h"

namespace kiln::testing {

// The index of the node named `name` in `doc`'s nodes, or -1.
inline int nodeNamed(const bridge::GraphDocument& doc, const QString& name) {
  for (int i = 0; i < doc.nodes().size(); ++i) {
    if (doc.nodes()[i].name == name) return i;
  }
  return -1;
}

// Calls `start` (opening a model or a body, expanding, applying shapes) and waits up to `timeoutMs` for `panel`'s
// next layout; false when none came in time.
inline bool waitForLayout(studio::GraphPanel& panel, const std::function<void()>& start, int timeoutMs = 60000) {
  QSignalSpy ready(&panel, &studio::GraphPanel::layoutReady);
  start();
  return ready.wait(timeoutMs);
}

// Opens the model at `path` in `panel` and waits up to `timeoutMs` for its first layout.
inline bool openAndWait(studio::GraphPanel& panel, const QString& path, int timeoutMs = 60000) {
  return waitForLayout(panel, [&panel, &path] { panel.openModel(path); }, timeoutMs);
}

}  // namespace kiln::testing
