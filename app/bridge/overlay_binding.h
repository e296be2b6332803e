// OverlayBinding: whether per-node data (a profile, a comparison) belongs on the model a graph view shows. The data
// carries its model's identity (app/common/node_data.h: model_hash, model_source_hash), the shown model its own
// (kiln::identifyModel, taken when the graph loads). Data is shown on its own model, by node name on that model's
// compiled twin (a ctx model compiled from it, or the source a ctx model was compiled from), by node name with a
// note when the data names no hash (files written before Kiln recorded one), and never on another model: the note
// says which model it belongs to instead.
#pragma once

#include <QString>

#include "compare_job.h"
#include "kiln/model_info.h"

namespace kiln::bridge {

enum class OverlayMatch {
  SameModel,      // the data's model hash is the shown model's
  CompiledTwin,   // the shown model is a ctx model compiled from the data's model: matched by node name
  SourceTwin,     // the data's model is a ctx model compiled from the shown model: matched by node name
  NamesOnly,      // the data names no model hash (or the shown model could not be read): matched by node name
  OtherModel,     // not the data's model, nor its twin, or no node name matches: not shown
};

struct OverlayBinding {
  OverlayMatch match = OverlayMatch::SameModel;
  QString note;  // for the legend: how the data was placed, or why it is not shown; "" for SameModel
  bool shown() const { return match != OverlayMatch::OtherModel; }
};

// How data of `dataNodes` nodes from the model `data` names (its kind, model, modelHash, modelSourceHash; its rows
// are not read) goes onto the model with `shown` identity, whose graph on display has `namesFound` of those node
// names (op nodes).
OverlayBinding bindOverlay(const NodeMetrics& data, int dataNodes, const ModelIdentity& shown, int namesFound);

}  // namespace kiln::bridge
