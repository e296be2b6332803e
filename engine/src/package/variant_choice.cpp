// kiln::choosePackageVariant: every variant's files checked against their digests, then judged for the device by
// the compatibility API; the best one wins, or the packaged source when none fits.
#include <algorithm>
#include <filesystem>
#include <tuple>

#include "kiln/config_keys.h"
#include "kiln/model_package.h"
#include "package/file_digest.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Why the package's files at `files` are not what the package says ("" when they are).
std::vector<std::string> fileProblems(const fs::path& root, const std::vector<PackageFile>& files) {
  std::vector<std::string> problems;
  for (const auto& file : files) {
    auto digest = package::digestFile((root / file.path).string());
    if (!digest.isOk()) {
      problems.push_back("file " + file.path + " cannot be read: " + digest.status().message());
    } else if (digest->size != file.size || digest->digest != file.digest) {
      problems.push_back("file " + file.path + " does not match its digest (" + digest->digest + ", " +
                         std::to_string(digest->size) + " bytes; the package says " + file.digest + ", " +
                         std::to_string(file.size) + " bytes): damaged or tampered, not loaded");
    }
  }
  return problems;
}

std::string requestedPrecision(const SessionOptions& options) {
  if (options.configEntryOr(config::kVulkanFp16, "0") == "1") return "fp16";
  if (options.configEntryOr(config::kVulkanAutotune, "0") == "1") return "autotune";
  return "fp32";
}

// `reason` with the package's folder taken off the paths it names (the compatibility API names files absolutely):
// "models/m/v/m_vulkan.bin: ..." reads the same wherever the package lies.
std::string withinPackage(std::string reason, const fs::path& root) {
  std::error_code error;
  for (const std::string& prefix : {fs::absolute(root, error).lexically_normal().string() + "/", root.string() + "/"}) {
    for (size_t at = reason.find(prefix); at != std::string::npos; at = reason.find(prefix, at)) reason.erase(at, prefix.size());
  }
  return reason;
}

int stateRank(CompiledModelCompatibility state) {
  switch (state) {
    case CompiledModelCompatibility::SUPPORTED_OPTIMAL: return 0;
    case CompiledModelCompatibility::SUPPORTED_PREFER_RECOMPILATION: return 1;
    default: return 2;  // never chosen
  }
}

}  // namespace

Result<PackageChoice> choosePackageVariant(const ModelPackage& package, const SessionOptions& options) {
  const fs::path root(package.path);
  PackageChoice choice;
  const std::vector<std::string> sourceProblems = fileProblems(root, package.sourceFiles);
  const std::string precision = requestedPrecision(options);
  CompatibilityQuery query;
  query.deviceSelector = options.configEntryOr(config::kVulkanDevice, "");
  if (!package.sourceModel.empty()) query.sourceModelPath = (root / package.sourceModel).string();
  for (const PackageVariant& variant : package.variants) {
    PackageVariantJudgement judged;
    judged.variant = variant.name;
    judged.precisionMatches = variant.precision == precision;
    judged.reasons = sourceProblems;
    for (auto& problem : fileProblems(root, variant.files)) judged.reasons.push_back(std::move(problem));
    if (variant.files.empty()) judged.reasons.push_back("the package lists no files of this variant to check");
    if (judged.reasons.empty()) {
      auto compatibility = getModelCompatibility((root / variant.ctxModel).string(), query);
      if (compatibility.isOk()) {
        judged.state = compatibility->state;
        for (const auto& reason : compatibility->reasons) judged.reasons.push_back(withinPackage(reason, root));
        if (choice.against.empty()) choice.against = compatibility->against;
      } else {
        judged.reasons.push_back(compatibility.status().message());
      }
    }
    choice.judged.push_back(std::move(judged));
  }
  // Best: the state, then the requested precision, then the fewest differences from the device, then package order.
  auto key = [](const PackageVariantJudgement& j, size_t index) {
    return std::make_tuple(stateRank(j.state), j.precisionMatches ? 0 : 1, j.reasons.size(), index);
  };
  for (size_t i = 0; i < choice.judged.size(); ++i) {
    if (stateRank(choice.judged[i].state) > 1) continue;
    if (choice.chosen < 0 || key(choice.judged[i], i) < key(choice.judged[static_cast<size_t>(choice.chosen)], static_cast<size_t>(choice.chosen))) {
      choice.chosen = static_cast<int>(i);
    }
  }
  if (choice.chosen >= 0) {
    const PackageVariant& variant = package.variants[static_cast<size_t>(choice.chosen)];
    const PackageVariantJudgement& judged = choice.judged[static_cast<size_t>(choice.chosen)];
    choice.modelPath = (root / variant.ctxModel).string();
    choice.sessionOptions = variant.sessionOptions;
    choice.summary = "model package " + package.path + ": variant " + variant.name + " (" +
                     compiledModelCompatibilityName(judged.state) + ", " + variant.precision +
                     (judged.precisionMatches ? ", the precision asked for" : ", not the " + precision + " asked for") + ")";
    return choice;
  }
  if (!sourceProblems.empty()) {
    return Status(StatusCode::INVALID_GRAPH, "model package " + package.path + ": no variant fits and the packaged "
                                             "source cannot be compiled: " + sourceProblems.front());
  }
  if (package.sourceModel.empty()) {
    return Status(StatusCode::INVALID_GRAPH, "model package " + package.path + ": no variant fits this device and the "
                                             "package holds no source model");
  }
  choice.modelPath = (root / package.sourceModel).string();
  choice.summary = "model package " + package.path + ": no variant fits this device, compiling the packaged source " +
                   package.sourceModel;
  return choice;
}

}  // namespace kiln
