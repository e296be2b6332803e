// How the apps find their data and each other when run from a build tree, with no KILN_* variable set: CMake
// writes kiln-build-tree.conf beside each built executable (kiln, kiln-studio), naming the source tree's resources/
// folder and the built kiln program. Installed executables have no such file (it is never installed), so an
// installed Kiln finds share/kiln beside bin/ and kiln beside kiln-studio as before. The idea is Qt's qt.conf.
#pragma once

#include <string>

namespace kiln::app {

// The value of `key` ("data_dir", "kiln_cli") in the kiln-build-tree.conf beside the executable `executablePath`,
// or "" when there is no such file or key. Lines are key=value; '#' starts a comment.
std::string buildTreeSetting(const std::string& executablePath, const std::string& key);

// Where the apps' data (models/, bench/, profiles/) is: $KILN_DATA_DIR when set, else the build tree's data_dir
// when `executablePath` is a built executable, else <prefix>/share/kiln beside <prefix>/bin.
std::string dataDirectory(const std::string& executablePath);

}  // namespace kiln::app
