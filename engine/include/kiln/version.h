// Kiln's version, as built.
#pragma once

namespace kiln {

// "0.1.0"
const char* engineVersion();

}  // namespace kiln
