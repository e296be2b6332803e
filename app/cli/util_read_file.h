// Reading a small text file for the CLI (lists, job files).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "kiln/status.h"

namespace kiln::cli {

inline Result<std::string> readTextFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot open '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace kiln::cli
