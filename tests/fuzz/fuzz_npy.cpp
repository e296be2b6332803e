// The .npy reader (kiln/tensor_io.h): the input is a .npy file, read as `kiln run --input` reads it.
#include "fuzz_support.h"
#include "kiln/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (kiln::fuzz::quietLogging(), true);
  (void)quiet;
  kiln::fuzz::note("readNpyFile", kiln::readNpyFile(kiln::fuzz::writeScratchFile("input.npy", data, size)));
  return 0;
}
