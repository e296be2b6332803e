// The model package reader (kiln run/check/inspect on a .kilnpkg folder, InferenceSession(folder)): the input is
// three descriptors separated by NUL bytes (manifest.json, models/m/metadata.json, models/m/v/variant.json) written
// as a package; readModelPackage must refuse anything hostile with a status and never touch a path outside it.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "kiln/model_package.h"

namespace {

void put(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (kiln::fuzz::quietLogging(), true);
  (void)quiet;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path root = kiln::fuzz::scratchDir() / "package.kilnpkg";
  std::error_code error;
  std::filesystem::remove_all(root, error);
  const char* files[] = {"manifest.json", "models/m/metadata.json", "models/m/v/variant.json"};
  size_t start = 0;
  for (const char* file : files) {
    if (start > input.size()) break;
    const size_t end = std::min(input.find('\0', start), input.size());
    put(root / file, input.substr(start, end - start));
    start = end + 1;
  }
  auto package = kiln::readModelPackage(root.string());
  kiln::fuzz::note("readModelPackage", package);
  if (package.isOk()) {
    // Every path the reader hands out stays inside the package.
    for (const auto& variant : package->variants) {
      if (variant.ctxModel.rfind("..", 0) == 0 || variant.ctxModel.rfind('/', 0) == 0) std::abort();
      for (const auto& file : variant.files) {
        if (file.path.rfind("..", 0) == 0 || file.path.rfind('/', 0) == 0) std::abort();
      }
    }
  }
  return 0;
}
