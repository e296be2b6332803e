// How kiln package, kiln inspect and kiln check show a model package: its variants (profile, precision, size,
// compatibility here, the one a session would choose) as a table or JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/model_package.h"

namespace kiln::cli {

// The package and, when judged, what this machine would choose (`choice` may be null).
nlohmann::json packageJson(const ModelPackage& package, const PackageChoice* choice);
void printPackage(const ModelPackage& package, const PackageChoice* choice);

}  // namespace kiln::cli
