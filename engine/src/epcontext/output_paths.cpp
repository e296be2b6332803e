// kiln/compile_outputs.h: the default output names and ONNX Runtime's folder rule, shared by compiling and merging.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "kiln/compile_outputs.h"

namespace fs = std::filesystem;

namespace kiln {

std::string defaultCtxModelPath(const std::string& modelPath) {
  const fs::path model(modelPath);
  return (model.parent_path() / (model.stem().string() + "_ctx.onnx")).string();
}

std::string defaultContextBinaryPath(const std::string& modelPath, const std::string& executionProvider) {
  const fs::path model(modelPath);
  std::string tag = executionProvider;
  const std::string suffix = "ExecutionProvider";
  if (tag.size() > suffix.size() && tag.compare(tag.size() - suffix.size(), suffix.size(), suffix) == 0) tag.resize(tag.size() - suffix.size());
  std::transform(tag.begin(), tag.end(), tag.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string stem = model.stem().string();
  const std::string ctx = "_ctx";
  if (stem.size() > ctx.size() && stem.compare(stem.size() - ctx.size(), ctx.size(), ctx) == 0) stem.resize(stem.size() - ctx.size());
  return (model.parent_path() / (stem + "_" + tag + ".bin")).string();
}

bool namesFolder(const std::string& path) {
  std::error_code ec;
  return path.empty() || path.back() == '/' || fs::is_directory(path, ec) || !fs::path(path).has_extension();
}

}  // namespace kiln
