// The context binary reader and the compatibility verdict: the input is a context binary (<stem>_vulkan.bin),
// inspected as `kiln inspect` does and judged against both device profiles of resources/profiles (no device needed).
// Most mutations only break a hash, so each input is read twice: as given, and re-sealed (every section hash the
// table lists, where the section lies inside the file, and the header checksum recomputed) so the decoders behind
// the hashes see mutated content too.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "context_binary/format.h"
#include "fuzz_support.h"
#include "kiln/context_binary.h"

namespace {

std::vector<std::byte> resealed(std::span<const std::byte> input) {
  namespace cb = kiln::ctxbin;
  std::vector<std::byte> bytes(input.begin(), input.end());
  if (bytes.size() < cb::kHeaderBytes) return bytes;
  uint32_t count = 0;
  std::memcpy(&count, bytes.data() + cb::kSectionCountOffset, sizeof count);
  count = std::min(count, cb::kMaxSections);
  const size_t tableEnd = cb::kHeaderBytes + count * cb::kSectionEntryBytes;
  if (tableEnd > bytes.size()) return bytes;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t entry = cb::kHeaderBytes + i * cb::kSectionEntryBytes;
    uint64_t offset = 0, size = 0;
    std::memcpy(&offset, bytes.data() + entry + 8, sizeof offset);
    std::memcpy(&size, bytes.data() + entry + 16, sizeof size);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    const uint64_t hash = cb::contentHash(std::span<const std::byte>(bytes).subspan(offset, size));
    std::memcpy(bytes.data() + entry + 24, &hash, sizeof hash);
  }
  std::memset(bytes.data() + cb::kHeaderBytes - 8, 0, 8);
  const uint64_t checksum = cb::contentHash(std::span<const std::byte>(bytes).first(tableEnd));
  std::memcpy(bytes.data() + cb::kHeaderBytes - 8, &checksum, sizeof checksum);
  return bytes;
}

void readOnce(std::span<const std::byte> bytes, const std::string& lavapipe, const std::string& minimal) {
  kiln::fuzz::note("inspectContextBinary", kiln::inspectContextBinary(bytes, "fuzz.bin"));
  kiln::fuzz::note("check against lavapipe", kiln::checkContextBinaryAgainstProfile(bytes, "fuzz.bin", lavapipe));
  kiln::fuzz::note("check against vulkan11_minimal", kiln::checkContextBinaryAgainstProfile(bytes, "fuzz.bin", minimal));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string lavapipe = (kiln::fuzz::quietLogging(), kiln::fuzz::sourceDir() / "resources/profiles/lavapipe.json").string();
  static const std::string minimal = (kiln::fuzz::sourceDir() / "resources/profiles/vulkan11_minimal.json").string();
  const auto bytes = kiln::fuzz::asBytes(data, size);
  readOnce(bytes, lavapipe, minimal);
  readOnce(resealed(bytes), lavapipe, minimal);
  return 0;
}
