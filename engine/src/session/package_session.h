// Session::create on a model package (kiln/model_package.h): the variant that fits this device is chosen, the choice
// and every rejected variant's reasons logged, and the session created from that variant's ctx model (or from the
// packaged source when none fits).
#pragma once

#include <memory>
#include <string>

#include "kiln/session.h"

namespace kiln {

Result<std::unique_ptr<Session>> createSessionFromPackage(const std::string& path, const SessionOptions& options);

}  // namespace kiln
