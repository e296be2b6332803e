// The inputs `kiln run`, `kiln bench`, `kiln compare` and the studio's Compare panel feed a session: files given
// with --input NAME=FILE, the others random (deterministic for a seed) in the session's input shapes (the model's,
// fixed by --shape) with free dimensions as 1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::app {

Result<std::vector<NamedTensor>> prepareInputs(const Session& session, const std::vector<std::string>& inputArgs,
                                               unsigned seed);
// The same for `declared` inputs (kiln::inspectModel's, no session needed): `shapes` fix the dimensions of random
// inputs (--shape), and `inputDir`, when not empty, gives DIR/<input name>.npy for each input found there
// (--input entries win).
Result<std::vector<NamedTensor>> prepareInputs(const std::vector<ValueMetadata>& declared,
                                               const std::vector<std::string>& inputArgs,
                                               const std::map<std::string, Shape>& shapes, const std::string& inputDir,
                                               unsigned seed);

}  // namespace kiln::app
