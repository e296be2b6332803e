// The jobs file of `kiln batch` (app/common/batch_jobs.h): the input is the file's text.
#include <string>

#include "batch_jobs.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::note("parseBatchJobs", kiln::app::parseBatchJobs(std::string(reinterpret_cast<const char*>(data), size)));
  return 0;
}
