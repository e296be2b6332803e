// What the fuzz targets share: a private scratch folder per process, writing an input there as a file, and the
// repository's data folders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "kiln/status.h"

namespace kiln::fuzz {

// The repository root (compiled in), for resources/ and the seed files.
std::filesystem::path sourceDir();
// A folder private to this process under the system temp folder, created on first use, removed at exit.
std::filesystem::path scratchDir();
// Writes `data` to scratchDir()/name (replacing it) and returns the path.
std::string writeScratchFile(const std::string& name, const uint8_t* data, size_t size);
// The input as bytes.
inline std::span<const std::byte> asBytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}
// KILN_FUZZ_VERBOSE=1: the targets print what each call answered.
bool verbose();
// With KILN_FUZZ_VERBOSE=1, prints what a call answered (to check that the seeds reach the deep paths).
void note(const char* call, const Status& status);
template <typename T>
void note(const char* call, const Result<T>& result) {
  note(call, result.isOk() ? Status() : result.status());
}
// Quiets the engine's log (the fuzzers run millions of inputs; errors are expected).
void quietLogging();

}  // namespace kiln::fuzz
