// A deterministic mutation driver for targets that only run in the ci build (fuzz_studio_bridge): every file of the
// folders named after the count is fed to LLVMFuzzerTestOneInput as it is and then <count> times mutated (byte
// flips, boundary bytes, truncation, chunk deletion and duplication), from a fixed seed, so a failure always
// reproduces. Usage: <program> <count> <folder>...   (KILN_FUZZ_SAVE_INPUT: below)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> mutated(std::vector<uint8_t> bytes, std::mt19937_64& random) {
  const int steps = 1 + static_cast<int>(random() % 2);
  for (int step = 0; step < steps && !bytes.empty(); ++step) {
    const size_t at = random() % bytes.size();
    switch (random() % 5) {
      case 0: bytes[at] ^= static_cast<uint8_t>(1u << (random() % 8)); break;
      case 1: {
        static constexpr uint8_t kBoundary[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        bytes[at] = kBoundary[random() % std::size(kBoundary)];
        break;
      }
      case 2: bytes.resize(at); break;
      case 3: bytes.erase(bytes.begin() + at, bytes.begin() + std::min(bytes.size(), at + 1 + random() % 64)); break;
      default: {
        const size_t length = std::min<size_t>(bytes.size() - at, 1 + random() % 64);
        std::vector<uint8_t> chunk(bytes.begin() + at, bytes.begin() + at + length);
        bytes.insert(bytes.begin() + random() % bytes.size(), chunk.begin(), chunk.end());
      }
    }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <mutations per file> <folder>...\n", argv[0]);
    return 2;
  }
  const long count = std::strtol(argv[1], nullptr, 10);
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::error_code error;
    if (!std::filesystem::is_directory(argv[i], error)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[i], error)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "mutate: no input file in the folders given\n");
    return 1;
  }
  // KILN_FUZZ_SAVE_INPUT=FILE: each input is written there before it runs, so a crash leaves its input behind.
  const char* saveTo = std::getenv("KILN_FUZZ_SAVE_INPUT");
  std::mt19937_64 random(20261125);
  size_t inputs = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<uint8_t> seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (long i = 0; i <= count; ++i) {
      const std::vector<uint8_t> input = i == 0 ? seed : mutated(seed, random);
      std::printf("%s #%ld (%zu bytes)\n", file.filename().string().c_str(), i, input.size());
      std::fflush(stdout);
      if (saveTo != nullptr) std::ofstream(saveTo, std::ios::binary | std::ios::trunc).write(
          reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
      LLVMFuzzerTestOneInput(input.data(), input.size());
      ++inputs;
    }
  }
  std::printf("mutate: %zu inputs, no crash\n", inputs);
  return 0;
}
