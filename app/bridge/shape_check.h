// Input shapes checked against the model before any work starts: a shape for a name the model has no input of is
// refused up front (the benchmark would otherwise fail only after its processes started).
#pragma once

#include <QString>
#include <QStringList>

#include "kiln/status.h"

namespace kiln::bridge {

// OK when every "NAME=DxDx..." entry of `shapes` names a graph input of the model at `modelPath`; INVALID_ARGUMENT
// naming the entry and the model's inputs otherwise; the model's own error when it cannot be read.
Status checkShapeInputs(const QString& modelPath, const QStringList& shapes);

}  // namespace kiln::bridge
