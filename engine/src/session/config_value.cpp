#include "session/config_value.h"

#include "kiln/config_keys.h"

namespace kiln {

std::string configValue(const SessionOptions& options, const char* key) {
  return options.configEntryOr(key, config::defaultValue(key));
}

}  // namespace kiln
