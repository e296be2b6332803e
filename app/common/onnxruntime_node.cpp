#include "onnxruntime_node.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "build_tree.h"
#include "child_process.h"
#include "kiln/tensor_io.h"

namespace kiln::app {
namespace {

namespace fs = std::filesystem;

// The private folder one ort_run.mjs call uses, removed with its files afterwards.
struct RunFolder {
  std::string path;
  ~RunFolder() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

Result<std::vector<NamedTensor>> runOnce(const OnnxRuntimeNode& runtime, const std::string& model,
                                         const std::vector<NamedTensor>& inputs) {
  RunFolder folder;
  std::error_code error;
  std::string pattern = (fs::temp_directory_path(error) / "kiln-ort-XXXXXX").string();
  if (error) pattern = "/tmp/kiln-ort-XXXXXX";
  if (!mkdtemp(pattern.data())) return Status(StatusCode::FAIL, "cannot create a temporary folder for onnxruntime");
  folder.path = pattern;
  ChildSpec spec;
  spec.argv = {runtime.node, runtime.script, runtime.ortDir, model, (fs::path(folder.path) / "out").string()};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string file = (fs::path(folder.path) / ("input_" + std::to_string(k) + ".npy")).string();
    KILN_RETURN_IF_ERROR(writeNpyFile(file, inputs[k].tensor));
    spec.argv.insert(spec.argv.end(), {"--input", inputs[k].name + "=" + file});
  }
  KILN_ASSIGN_OR_RETURN(ChildResult result, runChild(spec));
  if (!result.exited() || result.exitCode != 0) {
    const StatusCode code = result.exitCode == 3 ? StatusCode::NO_SUCHFILE : StatusCode::FAIL;
    std::string err = result.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return Status(code, "onnxruntime-node (" + result.describeEnd() + "): " + err);
  }
  const auto report = nlohmann::json::parse(result.out, nullptr, false);
  if (report.is_discarded() || !report.contains("outputs")) {
    return Status(StatusCode::FAIL, "onnxruntime-node printed no output list: " + result.out);
  }
  std::vector<NamedTensor> outputs;
  for (const auto& output : report["outputs"]) {
    KILN_ASSIGN_OR_RETURN(Tensor tensor, readNpyFile(output.value("file", "")));
    outputs.push_back({output.value("name", ""), std::move(tensor)});
  }
  return outputs;
}

}  // namespace

std::string findResource(const std::string& relative) {
  const fs::path base = dataDirectory(selfExecutable());
  std::error_code error;
  if (!fs::is_regular_file(base / relative, error)) return {};
  return fs::absolute(base / relative, error).string();
}

std::string onnxRuntimeDir(const std::string& explicitDir) {
  if (!explicitDir.empty()) return explicitDir;
  if (const char* dir = std::getenv("KILN_ONNXRUNTIME_NODE"); dir && *dir) return dir;
  const char* cache = std::getenv("KILN_CACHE_DIR");
  const char* home = std::getenv("HOME");
  if (!cache && !home) return {};
  return ((cache ? fs::path(cache) : fs::path(home) / ".cache" / "kiln") / "models" / "ort").string();
}

Result<OnnxRuntimeNode> findOnnxRuntimeNode(const std::string& explicitDir, const std::string& relativeScript) {
  OnnxRuntimeNode runtime{findOnPath("node"), findResource(relativeScript), onnxRuntimeDir(explicitDir)};
  std::string missing;
  std::error_code error;
  if (runtime.node.empty()) {
    missing = "node is not on PATH";
  } else if (runtime.script.empty()) {
    missing = relativeScript + " is not in Kiln's data folder " + dataDirectory(selfExecutable()) +
              " (an incomplete install; KILN_DATA_DIR names another folder)";
  } else if (!fs::is_directory(fs::path(runtime.ortDir) / "node_modules" / "onnxruntime-node", error)) {
    missing = "no onnxruntime-node under " + runtime.ortDir + " (--onnxruntime-node DIR)";
  }
  if (!missing.empty()) return Status(StatusCode::NO_SUCHFILE, missing);
  return runtime;
}

ExternalRunner onnxRuntimeRunner(const OnnxRuntimeNode& runtime) {
  return [runtime](const std::string& model, const std::vector<NamedTensor>& inputs) -> Result<std::vector<NamedTensor>> {
    try {
      return runOnce(runtime, model, inputs);
    } catch (const std::exception& e) {
      return Status(StatusCode::RUNTIME_EXCEPTION, std::string("running onnxruntime-node: ") + e.what());
    }
  };
}

}  // namespace kiln::app
