// The inputs `kiln run` and `kiln bench` feed a session: files given with --input NAME=FILE, the others random
// (deterministic for a seed) in the session's input shapes (the model's, fixed by --shape) with free dimensions as 1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::cli {

Result<std::vector<NamedTensor>> prepareInputs(const Session& session, const std::vector<std::string>& inputArgs,
                                               unsigned seed);

}  // namespace kiln::cli
