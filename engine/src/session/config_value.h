// One config key's value with its default, for the session steps that read one key and cannot fail (the value is
// not parsed). Layers below session/ read no key: they get their own structs. The validated parse of a whole session's config is session/session_config.h.
#pragma once

#include <string>

#include "kiln/session_options.h"

namespace kiln {

// The value of `key` in `options`, or its default from the key table (kiln/config_keys.h).
std::string configValue(const SessionOptions& options, const char* key);

}  // namespace kiln
