// Kiln's version, as built.
#pragma once

#include "kiln/export.h"

namespace kiln {

// "0.1.0"
KILN_EXPORT const char* engineVersion();

}  // namespace kiln
