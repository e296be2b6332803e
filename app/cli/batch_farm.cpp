#include "batch_farm.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "util_read_file.h"

namespace kiln::cli {

using app::BatchJob;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The files in `folder` whose name ends with `extension`, sorted by name.
Result<std::vector<fs::path>> filesIn(const std::string& folder, const std::string& extension,
                                      const char* option) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    return Status(StatusCode::INVALID_ARGUMENT, std::string(option) + ": no folder '" + folder + "'");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.is_regular_file(error) && entry.path().extension() == extension) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// `path` as the jobs file will name it: relative when it lies under the jobs file's folder (the folder can
// move), else absolute.
std::string fromJobsFolder(const fs::path& path, const std::string& jobsFolder) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error).lexically_normal();
  const fs::path relative = absolute.lexically_relative(fs::absolute(jobsFolder, error).lexically_normal());
  const bool under = !relative.empty() && *relative.begin() != "..";
  return under ? relative.string() : absolute.string();
}

const JobOutcome* findOutcome(const std::vector<BatchJob>& jobs, const std::vector<JobOutcome>& outcomes,
                              const std::string& name) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].name == name) return &outcomes[i];
  }
  return nullptr;
}

// The median of mode `mode`'s `metric` in a kiln bench result, or a negative number.
double benchMedian(const json& result, const std::string& mode, const std::string& metric) {
  if (!result.is_object() || !result.contains("modes") || !result["modes"].is_array()) return -1;
  for (const auto& row : result["modes"]) {
    if (row.value("name", "") == mode && row.contains(metric) && row[metric].is_object()) {
      return row[metric].value("median", -1.0);
    }
  }
  return -1;
}

}  // namespace

Result<json> farmJobs(const std::string& modelsDir, const std::string& profilesDir,
                      const std::string& jobsFolder, int benchRuns) {
  auto models = filesIn(modelsDir, ".onnx", "--matrix");
  if (!models.isOk()) return models.status();
  auto candidates = filesIn(profilesDir, ".json", "--profiles");
  if (!candidates.isOk()) return candidates.status();
  std::vector<fs::path> profiles;
  for (const auto& file : *candidates) {
    auto text = readTextFile(file.string());
    const json profile = text.isOk() ? json::parse(*text, nullptr, false) : json();
    if (profile.is_object() && profile.contains("kiln_device_profile")) profiles.push_back(file);
  }
  if (models->empty())
    return Status(StatusCode::INVALID_ARGUMENT, "--matrix: no .onnx model in '" + modelsDir + "'");
  if (profiles.empty()) {
    return Status(
        StatusCode::INVALID_ARGUMENT,
        "--profiles: no device profile (.json from kiln devices --profile) in '" + profilesDir + "'");
  }
  json jobs = json::array();
  for (const auto& model : *models) {
    const std::string stem = model.stem().string();
    const std::string modelPath = fromJobsFolder(model, jobsFolder);
    for (const auto& profile : profiles) {
      const std::string cell = stem + "@" + profile.stem().string();
      const std::string profilePath = fromJobsFolder(profile, jobsFolder);
      const std::string out = "farm/" + cell + "/" + stem;
      jobs.push_back({{"name", "compile-" + cell},
                      {"command", "compile"},
                      {"args", {modelPath, "-o", out + "_ctx.onnx", "--target-profile", profilePath}}});
      jobs.push_back({{"name", "check-" + cell},
                      {"command", "check"},
                      {"after", "compile-" + cell},
                      {"args", {out + "_vulkan.bin", "--profile", profilePath}}});
    }
    jobs.push_back(
        {{"name", "bench-" + stem},
         {"command", "bench"},
         {"args", {modelPath, "--runs", std::to_string(benchRuns), "--modes", "cold,epctx-file"}}});
  }
  return json{{"jobs", jobs}};
}

void printFarmTable(const std::vector<BatchJob>& jobs, const std::vector<JobOutcome>& outcomes) {
  struct Row {
    std::string model, profile, compile, verdict, size, compileMs, bench;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string& name = jobs[i].name;
    const size_t at = name.find('@');
    if (jobs[i].command != "compile" || name.rfind("compile-", 0) != 0 || at == std::string::npos) continue;
    Row row{name.substr(8, at - 8), name.substr(at + 1), statusName(outcomes[i].status), "-", "-", "-", "-"};
    const json& compiled = outcomes[i].result;
    if (outcomes[i].status == JobStatus::Ok && compiled.is_object()) {
      if (compiled.contains("binary") && compiled["binary"].is_object()) {
        row.size = std::to_string(compiled["binary"].value("file_size", 0LL) / 1024) + " KiB";
      }
      if (compiled.contains("timings") && compiled["timings"].is_object()) {
        row.compileMs =
            std::to_string(static_cast<long long>(compiled["timings"].value("session_total_ms", 0.0)));
      }
    }
    if (const JobOutcome* check = findOutcome(jobs, outcomes, "check-" + row.model + "@" + row.profile)) {
      row.verdict = check->result.is_object() && check->result.contains("verdict") &&
                            check->result["verdict"].is_string()
                        ? check->result["verdict"].get<std::string>()
                        : statusName(check->status);
    }
    if (const JobOutcome* bench = findOutcome(jobs, outcomes, "bench-" + row.model)) {
      const double load = benchMedian(bench->result, "epctx-file", "session_create_ms");
      char text[48];
      std::snprintf(text, sizeof text, "%.1f ms", load);
      row.bench = bench->status == JobStatus::Ok && load >= 0 ? text : statusName(bench->status);
    }
    rows.push_back(row);
  }
  if (rows.empty()) return;
  size_t modelWidth = 5, profileWidth = 7;
  for (const auto& row : rows) {
    modelWidth = std::max(modelWidth, row.model.size());
    profileWidth = std::max(profileWidth, row.profile.size());
  }
  const int mw = static_cast<int>(modelWidth), pw = static_cast<int>(profileWidth);
  std::printf("\n%-*s  %-*s  %-9s  %-12s  %-9s  %-10s  %s\n", mw, "MODEL", pw, "PROFILE", "COMPILE",
              "VERDICT", "BINARY", "COMPILE_MS", "LOAD_LOCAL (epctx, bench median)");
  for (const auto& r : rows) {
    std::printf("%-*s  %-*s  %-9s  %-12s  %-9s  %-10s  %s\n", mw, r.model.c_str(), pw, r.profile.c_str(),
                r.compile.c_str(), r.verdict.c_str(), r.size.c_str(), r.compileMs.c_str(), r.bench.c_str());
  }
}

}  // namespace kiln::cli
