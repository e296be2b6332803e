#include "onnx/model_writer.h"

#include "util/file_io.h"

namespace kiln::onnx_io {

Result<std::vector<std::byte>> saveModelBuffer(const onnx::ModelProto& model) {
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX)) {
    return Status(StatusCode::INVALID_ARGUMENT, "the model is larger than protobuf's 2 GiB limit: use external data");
  }
  std::vector<std::byte> bytes(size);
  if (!model.SerializeToArray(bytes.data(), static_cast<int>(size))) {
    return Status(StatusCode::FAIL, "protobuf serialization failed");
  }
  return bytes;
}

Status saveModelStream(const onnx::ModelProto& model, const std::function<Status(std::span<const std::byte>)>& write) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, saveModelBuffer(model));
  constexpr size_t kChunk = 1 << 20;
  for (size_t offset = 0; offset < bytes.size(); offset += kChunk) {
    KILN_RETURN_IF_ERROR(write(std::span(bytes).subspan(offset, std::min(kChunk, bytes.size() - offset))));
  }
  return Status::ok();
}

Status saveModelFile(const onnx::ModelProto& model, const std::string& path) {
  return writeFileAtomically(path, [&model](const auto& write) { return saveModelStream(model, write); });
}

}  // namespace kiln::onnx_io
