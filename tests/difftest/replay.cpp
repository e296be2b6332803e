#include "replay.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "kiln/tensor_io.h"

namespace kiln::difftest {
namespace {

namespace fs = std::filesystem;

// The model's graph inputs that are not initializers, in order.
Result<std::vector<std::string>> graphInputs(const std::string& modelPath) {
  onnx::ModelProto model;
  std::ifstream in(modelPath, std::ios::binary);
  if (!in || !model.ParseFromIstream(&in)) return Status(StatusCode::INVALID_GRAPH, "cannot read " + modelPath);
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& v : model.graph().input()) {
    if (!initializers.count(v.name())) names.push_back(v.name());
  }
  return names;
}

Result<std::vector<Tensor>> readNumbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int k = 0;; ++k) {
    const fs::path file = dir / (prefix + std::to_string(k) + ".npy");
    if (!fs::exists(file)) break;
    KILN_ASSIGN_OR_RETURN(Tensor t, readNpyFile(file.string()));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

}  // namespace

int replayRegressions(const std::string& root, const RunnerSettings& settings) {
  std::error_code ec;
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.is_directory()) folders.push_back(entry.path());
  }
  if (ec || folders.empty()) {
    std::cerr << "kiln-difftest: error: no regression folders under " << root << "\n";
    return -1;
  }
  std::sort(folders.begin(), folders.end());
  int disagreements = 0;
  for (const fs::path& folder : folders) {
    // Each replay writes its ctx model beside the source: a private copy keeps the source tree clean.
    const fs::path work = fs::temp_directory_path() / ("kiln-difftest-replay-" + folder.filename().string());
    fs::remove_all(work, ec);
    fs::create_directories(work);
    CaseFiles files;
    files.dir = work.string();
    files.model = (work / "model.onnx").string();
    fs::copy_file(folder / "model.onnx", files.model, ec);
    auto names = graphInputs(files.model);
    auto inputs = readNumbered(folder, "input_");
    auto expected = readNumbered(folder, "expected_");
    if (!names.isOk() || !inputs.isOk() || !expected.isOk() || names->size() != inputs->size() || expected->empty()) {
      std::cout << "DISAGREEMENT " << folder.filename().string() << ": unreadable regression folder\n";
      ++disagreements;
      continue;
    }
    for (size_t k = 0; k < names->size(); ++k) files.inputs.push_back({(*names)[k], (*inputs)[k]});
    files.outputSlack.assign(expected->size(), 0.0);
    RunnerSettings replay = settings;
    replay.bisect = false;
    for (const SideOutcome& o : runCase(files, *expected, replay)) {
      if (o.kind == SideOutcome::Kind::AGREE) continue;
      std::cout << "DISAGREEMENT " << folder.filename().string() << " " << sideName(o.side) << ": " << o.detail << "\n";
      ++disagreements;
    }
    fs::remove_all(work, ec);
  }
  std::cout << "kiln-difftest: " << folders.size() << " regression models, " << disagreements << " disagreements\n";
  return disagreements;
}

}  // namespace kiln::difftest
