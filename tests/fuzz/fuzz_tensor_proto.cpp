// The TensorProto reader (kiln/tensor_io.h): the input is a serialized onnx.TensorProto file (.pb), read as a
// tensor, and as a SequenceProto and an OptionalProto the way `kiln run --input` reads sequence/optional inputs.
#include "fuzz_support.h"
#include "kiln/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (kiln::fuzz::quietLogging(), true);
  (void)quiet;
  const std::string path = kiln::fuzz::writeScratchFile("input.pb", data, size);
  std::string name;
  kiln::fuzz::note("readTensorProtoFile", kiln::readTensorProtoFile(path, &name));
  kiln::fuzz::note("readValueProtoFile(SEQUENCE)", kiln::readValueProtoFile(path, kiln::ValueKind::SEQUENCE, &name));
  kiln::fuzz::note("readValueProtoFile(OPTIONAL)", kiln::readValueProtoFile(path, kiln::ValueKind::OPTIONAL, &name));
  return 0;
}
