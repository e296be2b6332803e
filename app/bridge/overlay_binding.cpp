#include "overlay_binding.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace kiln::bridge {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("OverlayBinding", text); }

QString kindText(const NodeMetrics& data) {
  if (data.kind == QLatin1String("profile")) return tr("Profile");
  if (data.kind == QLatin1String("compare")) return tr("Comparison");
  return tr("Per-node data");
}

QString modelName(const NodeMetrics& data) {
  return data.model.isEmpty() ? tr("another model") : QFileInfo(data.model).fileName();
}

}  // namespace

OverlayBinding bindOverlay(const NodeMetrics& data, int dataNodes, const ModelIdentity& shown, int namesFound) {
  const QString hash = QString::fromStdString(shown.contentHash);
  const QString compiledFrom = QString::fromStdString(shown.sourceHash);
  const QString matched = tr("%1 of %2 nodes matched by name").arg(namesFound).arg(dataNodes);
  if (!data.modelHash.isEmpty() && !hash.isEmpty()) {
    if (data.modelHash == hash) return {OverlayMatch::SameModel, {}};
    if (data.modelHash == compiledFrom) {
      if (namesFound == 0) {
        return {OverlayMatch::OtherModel,
                tr("%1 of the source model %2 is not shown: every node of it runs inside this compiled model's "
                   "EPContext nodes (open the source to see it)").arg(kindText(data), modelName(data))};
      }
      return {OverlayMatch::CompiledTwin,
              tr("%1 of the source model %2, on its compiled model: %3 (the rest run inside EPContext nodes)")
                  .arg(kindText(data), modelName(data), matched)};
    }
    if (data.modelSourceHash == hash && namesFound > 0) {
      return {OverlayMatch::SourceTwin,
              tr("%1 of the compiled model %2, on its source: %3").arg(kindText(data), modelName(data), matched)};
    }
    return {OverlayMatch::OtherModel,
            tr("%1 of %2 is not shown: this graph is another model (its content differs)").arg(kindText(data), modelName(data))};
  }
  if (namesFound == 0) {
    return {OverlayMatch::OtherModel,
            tr("%1 of %2 is not shown: none of its %3 nodes is in this graph").arg(kindText(data), modelName(data)).arg(dataNodes)};
  }
  const QString why = data.modelHash.isEmpty() ? tr("the data does not record its model's content hash")
                                               : tr("the model on display could not be read to check it");
  return {OverlayMatch::NamesOnly, tr("%1 of %2: %3, %4").arg(kindText(data), modelName(data), matched, why)};
}

}  // namespace kiln::bridge
