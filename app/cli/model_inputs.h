// The inputs `kiln run` and `kiln bench` feed a session: files given with --input NAME=FILE, the others random
// (deterministic for a seed) in the --shape sizes or the model's fixed ones (free dimensions become 1).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::cli {

Result<std::vector<NamedTensor>> prepareInputs(const Session& session, const std::vector<std::string>& inputArgs,
                                               const std::map<std::string, Shape>& shapes, unsigned seed);

}  // namespace kiln::cli
