#include "fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "kiln/log.h"

namespace kiln::fuzz {

namespace {

std::filesystem::path& scratchPath() {
  static std::filesystem::path path;
  return path;
}

void removeScratch() {
  std::error_code ignored;
  if (!scratchPath().empty()) std::filesystem::remove_all(scratchPath(), ignored);
}

}  // namespace

std::filesystem::path sourceDir() { return KILN_FUZZ_SOURCE_DIR; }

std::filesystem::path scratchDir() {
  if (scratchPath().empty()) {
    std::error_code error;
    auto base = std::filesystem::temp_directory_path(error);
    if (error) base = "/tmp";
    scratchPath() = base / ("kiln-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratchPath(), error);
    std::atexit(removeScratch);
  }
  return scratchPath();
}

std::string writeScratchFile(const std::string& name, const uint8_t* data, size_t size) {
  auto path = scratchDir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path.string();
}

bool verbose() {
  static const bool on = [] {
    const char* value = std::getenv("KILN_FUZZ_VERBOSE");
    return value != nullptr && std::string(value) == "1";
  }();
  return on;
}

void note(const char* call, const Status& status) {
  if (verbose()) std::fprintf(stderr, "  %s: %s\n", call, status.isOk() ? "OK" : status.toString().c_str());
}

void quietLogging() {
  setLogSink(LogLevel::Off, [](LogLevel, std::string_view) {});
}

}  // namespace kiln::fuzz
