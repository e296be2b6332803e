#include "package_output.h"

#include <cstdio>

namespace kiln::cli {
namespace {

uint64_t variantBytes(const PackageVariant& variant) {
  uint64_t bytes = 0;
  for (const auto& file : variant.files) bytes += file.size;
  return bytes;
}

nlohmann::json filesJson(const std::vector<PackageFile>& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& file : files) list.push_back({{"path", file.path}, {"digest", file.digest}, {"size", file.size}});
  return list;
}

}  // namespace

nlohmann::json packageJson(const ModelPackage& package, const PackageChoice* choice) {
  nlohmann::json variants = nlohmann::json::array();
  for (size_t i = 0; i < package.variants.size(); ++i) {
    const PackageVariant& variant = package.variants[i];
    nlohmann::json entry = {{"name", variant.name},
                            {"execution_provider", variant.executionProvider},
                            {"device", variant.device},
                            {"profile", variant.profile},
                            {"precision", variant.precision},
                            {"ctx_model", variant.ctxModel},
                            {"compile_identity", variant.compileIdentity},
                            {"compatibility_string", variant.compatibilityInfo},
                            {"bytes", variantBytes(variant)},
                            {"files", filesJson(variant.files)}};
    if (choice && i < choice->judged.size()) {
      const PackageVariantJudgement& judged = choice->judged[i];
      entry["compatibility"] = compiledModelCompatibilityName(judged.state);
      entry["precision_matches"] = judged.precisionMatches;
      entry["reasons"] = judged.reasons;
      entry["chosen"] = choice->chosen == static_cast<int>(i);
    }
    variants.push_back(std::move(entry));
  }
  nlohmann::json document = {{"path", package.path},
                             {"kind", "model_package"},
                             {"schema_version", package.schemaVersion},
                             {"component", package.component},
                             {"source_model", package.sourceModel},
                             {"source_files", filesJson(package.sourceFiles)},
                             {"total_bytes", package.totalBytes},
                             {"shared_bytes", package.sharedBytes},
                             {"variants", variants}};
  if (choice) {
    document["choice"] = {{"variant", choice->chosen >= 0 ? nlohmann::json(package.variants[static_cast<size_t>(choice->chosen)].name)
                                                            : nlohmann::json(nullptr)},
                          {"model", choice->modelPath},
                          {"against", choice->against},
                          {"compiles_source", choice->chosen < 0},
                          {"summary", choice->summary}};
  }
  return document;
}

void printPackage(const ModelPackage& package, const PackageChoice* choice) {
  std::printf("model package %s: component %s, %zu variant(s), %.1f MB on disk (%.1f MB source weights shared by all)\n",
              package.path.c_str(), package.component.c_str(), package.variants.size(), package.totalBytes / 1e6,
              package.sharedBytes / 1e6);
  std::printf("  %-24s %-9s %10s  %-31s %s\n", "variant", "precision", "bytes", choice ? "compatibility here" : "", "device");
  for (size_t i = 0; i < package.variants.size(); ++i) {
    const PackageVariant& variant = package.variants[i];
    const bool chosen = choice && choice->chosen == static_cast<int>(i);
    const char* state = choice && i < choice->judged.size() ? compiledModelCompatibilityName(choice->judged[i].state) : "";
    std::printf("%s %-24s %-9s %10llu  %-31s %s\n", chosen ? "*" : " ", variant.name.c_str(), variant.precision.c_str(),
                static_cast<unsigned long long>(variantBytes(variant)), state, variant.device.c_str());
    if (choice && i < choice->judged.size() && !chosen) {
      for (const auto& reason : choice->judged[i].reasons) std::printf("      - %s\n", reason.c_str());
    }
  }
  if (choice) std::printf("%s\n", choice->summary.c_str());
}

}  // namespace kiln::cli
