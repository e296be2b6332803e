// The device profile parser (`--target-profile`, `kiln check --profile`): the input is a profile's JSON. A profile
// that parses must survive its own round trip (written back with deviceProfileJson, it parses again).
#include <cstdlib>
#include <string>

#include "device/device_profile.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (kiln::fuzz::quietLogging(), true);
  (void)quiet;
  auto device = kiln::vk::parseDeviceProfile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  kiln::fuzz::note("parseDeviceProfile", device);
  if (!device.isOk()) return 0;
  auto again = kiln::vk::parseDeviceProfile(kiln::vk::deviceProfileJson(*device), "round trip");
  if (!again.isOk()) std::abort();  // the engine's own output must parse
  return 0;
}
