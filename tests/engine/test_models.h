// Small ONNX models built in code for engine tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

// A fresh empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Y = X + B with B a float[4] initializer {1,2,3,4}; X is float[N,4] ("N" symbolic).
onnx::ModelProto makeAddModel();
// The same model with B stored as external data in `dataFile` (relative location) at offset 0.
onnx::ModelProto makeExternalAddModel(const std::string& location);
// Writes `bytes` to `path`.
void writeBytes(const std::string& path, const std::string& bytes);

}  // namespace kiln::testing
