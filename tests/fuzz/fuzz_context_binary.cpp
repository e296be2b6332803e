// The context binary reader and the compatibility verdict: the input is a context binary (<stem>_vulkan.bin),
// inspected as `kiln inspect` does and judged against both device profiles of resources/profiles (no device needed).
#include <string>

#include "fuzz_support.h"
#include "kiln/context_binary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string lavapipe = (kiln::fuzz::quietLogging(), kiln::fuzz::sourceDir() / "resources/profiles/lavapipe.json").string();
  static const std::string minimal = (kiln::fuzz::sourceDir() / "resources/profiles/vulkan11_minimal.json").string();
  const auto bytes = kiln::fuzz::asBytes(data, size);
  kiln::fuzz::note("inspectContextBinary", kiln::inspectContextBinary(bytes, "fuzz.bin"));
  kiln::fuzz::note("check against lavapipe", kiln::checkContextBinaryAgainstProfile(bytes, "fuzz.bin", lavapipe));
  kiln::fuzz::note("check against vulkan11_minimal", kiln::checkContextBinaryAgainstProfile(bytes, "fuzz.bin", minimal));
  return 0;
}
