// Compile outputs as files on disk: which files a compile of the studio's form writes, which of them exist already
// (so the studio asks before replacing them), and the output path the form shows for each source model.
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>

#include "compile_settings.h"

namespace kiln::bridge {

// The files a compile with `settings` writes: the ctx model (kiln::defaultCtxModelPath of the source when the output
// is empty), its context binary unless embed mode is on, and the external initializers file when one is named.
// Absolute paths, in that order; empty when there is no source and no output.
QStringList compileOutputFiles(const app::CompileSettings& settings);

// The subset of compileOutputFiles(settings) that exists now: what a compile would replace.
QStringList existingCompileOutputs(const app::CompileSettings& settings);

// The compile output path per source model. A path the user typed belongs to the model it was typed for: opening
// another model shows that model's default (<stem>_ctx.onnx beside it) unless the user typed one for it earlier.
class OutputPathChoice {
 public:
  // The path to show for `source`: the one typed for it, else kiln::defaultCtxModelPath(source) ("" for "").
  QString outputFor(const QString& source) const;
  // Records the path shown for `source` when the user leaves it: a typed path is remembered, an empty one or the
  // default forgets the choice.
  void remember(const QString& source, const QString& output);

 private:
  QHash<QString, QString> typed_;  // absolute source path -> the output path typed for it
};

// The compile form's fields that describe one model (its input shapes, its node-name prefix, its external
// initializers file), per source model: opening another model shows what was typed for it, or nothing, so a
// shape naming model A's input never reaches model B's compile (where it would fail).
class ModelFieldsMemory {
 public:
  using Fields = QHash<QString, QString>;  // field name -> text
  // What was typed for `source` (empty texts when nothing was).
  Fields fieldsFor(const QString& source) const;
  // Records the fields shown for `source` when the user leaves it; empty texts are forgotten.
  void remember(const QString& source, const Fields& fields);

 private:
  QHash<QString, Fields> typed_;  // absolute source path -> its non-empty fields
};

}  // namespace kiln::bridge
