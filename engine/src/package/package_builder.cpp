// kiln::packageModel and its steps: planPackage (the source copied into the package being assembled, the variants
// listed in plan.json), one weightless compile per (profile, precision), and assemblePackage (digests, descriptors,
// the folder published with one rename). packageModel runs the three in one process; kiln package --plan hands the
// compiles to kiln batch (locally or on Slurm) and --assemble finishes.
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "kiln/compatibility.h"
#include "kiln/compiler.h"
#include "kiln/config_keys.h"
#include "kiln/device.h"
#include "kiln/epcontext.h"
#include "kiln/model_package.h"
#include "kiln/provider_names.h"
#include "onnx/model_loader.h"
#include "package/file_digest.h"
#include "package/package_manifest.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPlanFile = "plan.json";
constexpr const char* kPackageFolder = "package";  // inside the plan folder: the package being assembled

Result<PackageFile> packageFile(const fs::path& root, const fs::path& file) {
  KILN_ASSIGN_OR_RETURN(const package::FileDigest digest, package::digestFile(file.string()));
  return PackageFile{file.lexically_relative(root).generic_string(), digest.digest, digest.size};
}

// Copies the source model and the external data files it reads into `folder`, keeping their relative places.
Result<std::vector<fs::path>> copySource(const std::string& source, const fs::path& folder) {
  const fs::path sourceFolder = fs::absolute(source).parent_path();
  std::vector<fs::path> copied{folder / fs::path(source).filename()};
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return Status(StatusCode::FAIL, "cannot create '" + folder.string() + "': " + error.message());
  fs::copy_file(source, copied.front(), error);
  if (error) return Status(StatusCode::FAIL, "cannot copy '" + source + "': " + error.message());
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(source));
  KILN_ASSIGN_OR_RETURN(const auto external, onnx_io::externalInitializerRanges(file->bytes(), source));
  std::set<fs::path> dataFiles;
  for (const auto& [name, range] : external) dataFiles.insert(fs::absolute(range.path).lexically_normal());
  for (const fs::path& data : dataFiles) {
    const fs::path target = folder / data.lexically_relative(sourceFolder);
    fs::create_directories(target.parent_path(), error);
    fs::copy_file(data, target, error);
    if (error) return Status(StatusCode::FAIL, "cannot copy external data '" + data.string() + "': " + error.message());
    copied.push_back(target);
  }
  return copied;
}

// "lavapipe" for profiles/lavapipe.json, "device" for the live device.
std::string targetName(const std::string& profile) { return profile.empty() ? "device" : fs::path(profile).stem().string(); }

Result<std::string> targetDevice(const std::string& profile, const std::string& selector) {
  if (!profile.empty()) {
    KILN_ASSIGN_OR_RETURN(const VulkanDeviceDescription device, readVulkanDeviceProfile(profile));
    return device.name;
  }
  KILN_ASSIGN_OR_RETURN(const auto devices, listVulkanDevices());
  for (const auto& device : devices) {
    if (selector.empty() || std::to_string(device.index) == selector || device.name.find(selector) != std::string::npos) {
      return device.name;
    }
  }
  return std::string("live device");
}

Status checkOptions(const PackageOptions& options) {
  if (options.sourceModel.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no source model to package");
  std::error_code error;
  if (!fs::is_regular_file(options.sourceModel, error)) {
    return Status(StatusCode::INVALID_ARGUMENT, "source model '" + options.sourceModel + "' is not a file");
  }
  if (options.outputFolder.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no package folder to write");
  if (options.precisions.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no precision to compile");
  for (const auto& precision : options.precisions) {
    const auto& known = packageVariantPrecisions();
    if (std::find(known.begin(), known.end(), precision) == known.end()) {
      return Status(StatusCode::INVALID_ARGUMENT, "unknown precision '" + precision + "' (fp32, fp16, autotune)");
    }
  }
  if (fs::exists(options.outputFolder, error) && !options.overwrite) {
    return Status(StatusCode::INVALID_ARGUMENT, "'" + options.outputFolder + "' exists: choose another folder or "
                                                "ask to replace it (PackageOptions::overwrite)");
  }
  return Status::ok();
}

// Moves the assembled `staged` folder to `destination`, replacing an existing one (moved aside first, then removed).
Status publish(const fs::path& staged, const fs::path& destination, bool overwrite) {
  std::error_code error;
  const bool replacing = fs::exists(destination, error);
  if (replacing && !overwrite) {
    return Status(StatusCode::INVALID_ARGUMENT, "'" + destination.string() + "' exists: choose another folder or ask "
                                                "to replace it (PackageOptions::overwrite)");
  }
  const fs::path aside = destination.string() + ".replaced-" + std::to_string(::getpid());
  if (replacing) {
    fs::rename(destination, aside, error);
    if (error) return Status(StatusCode::FAIL, "cannot move the old package aside: " + error.message());
  }
  fs::rename(staged, destination, error);
  if (error) {
    std::error_code ignored;
    if (replacing) fs::rename(aside, destination, ignored);
    return Status(StatusCode::FAIL, "cannot publish the package at '" + destination.string() + "': " + error.message());
  }
  if (replacing) fs::remove_all(aside, error);
  return Status::ok();
}

nlohmann::json planJson(const PackagePlan& plan, const ModelPackage& package) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& variant : plan.variants) {
    variants.push_back({{"name", variant.name}, {"profile", variant.profile}, {"precision", variant.precision},
                        {"device", variant.device}, {"source_model", variant.sourceModel},
                        {"ctx_model", variant.ctxModel}, {"config", variant.config}});
  }
  nlohmann::json source = nlohmann::json::array();
  for (const auto& file : package.sourceFiles) source.push_back({{"path", file.path}, {"digest", file.digest}, {"size", file.size}});
  return {{"output", plan.outputFolder}, {"component", package.component}, {"source_model", package.sourceModel},
          {"source_files", source}, {"variants", variants}};
}

// The plan and the package skeleton (component, source files) that planPackage wrote to `folder`.
Result<std::pair<PackagePlan, ModelPackage>> readPlan(const fs::path& folder) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes((folder / kPlanFile).string()));
  const auto json = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                          reinterpret_cast<const char*>(bytes.data()) + bytes.size(), nullptr, false);
  if (!json.is_object()) return Status(StatusCode::INVALID_ARGUMENT, (folder / kPlanFile).string() + " is not a package plan");
  PackagePlan plan;
  ModelPackage package;
  try {
    plan.folder = folder.string();
    plan.outputFolder = json.at("output").get<std::string>();
    package.component = json.at("component").get<std::string>();
    package.sourceModel = json.at("source_model").get<std::string>();
    for (const auto& file : json.at("source_files")) {
      package.sourceFiles.push_back({file.at("path").get<std::string>(), file.at("digest").get<std::string>(),
                                     file.at("size").get<uint64_t>()});
    }
    for (const auto& entry : json.at("variants")) {
      PackageVariantPlan variant;
      variant.name = entry.at("name").get<std::string>();
      variant.profile = entry.at("profile").get<std::string>();
      variant.precision = entry.at("precision").get<std::string>();
      variant.device = entry.at("device").get<std::string>();
      variant.sourceModel = entry.at("source_model").get<std::string>();
      variant.ctxModel = entry.at("ctx_model").get<std::string>();
      variant.config = entry.at("config").get<std::map<std::string, std::string>>();
      plan.variants.push_back(std::move(variant));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::INVALID_ARGUMENT, (folder / kPlanFile).string() + " is not a package plan: " + e.what());
  }
  return std::make_pair(std::move(plan), std::move(package));
}

// The compile record's identity in the ctx model at `path` ("" when it records none).
std::string recordedIdentity(const std::string& path) {
  auto info = inspectEpContextModel(path);
  if (!info.isOk()) return "";
  for (const auto& [key, value] : info->metadata) {
    if (key != "kiln.compile_record") continue;
    const auto record = nlohmann::json::parse(value, nullptr, false);
    if (record.is_object() && record.contains("identity") && record["identity"].is_string()) {
      return record["identity"].get<std::string>();
    }
  }
  return "";
}

// A compiled variant described from its files in the package being assembled at `root`.
Result<PackageVariant> describeVariant(const fs::path& root, const PackageVariantPlan& planned) {
  PackageVariant variant;
  variant.name = planned.name;
  variant.executionProvider = kVulkanExecutionProvider;
  variant.device = planned.device;
  variant.profile = planned.profile.empty() ? "" : fs::path(planned.profile).filename().string();
  variant.precision = planned.precision;
  variant.ctxModel = fs::path(planned.ctxModel).lexically_relative(root).generic_string();
  KILN_ASSIGN_OR_RETURN(variant.compatibilityInfo, getCompatibilityInfoFromModel(planned.ctxModel));
  variant.compileIdentity = recordedIdentity(planned.ctxModel);
  std::error_code error;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(planned.ctxModel).parent_path(), error)) {
    if (entry.is_regular_file(error) && entry.path().filename() != package::kVariantFile) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    return std::make_pair(a != planned.ctxModel, a.filename()) < std::make_pair(b != planned.ctxModel, b.filename());
  });
  for (const auto& file : files) {
    KILN_ASSIGN_OR_RETURN(PackageFile packaged, packageFile(root, file));
    variant.files.push_back(std::move(packaged));
  }
  return variant;
}

// Removes the plan folder unless released (a failed packageModel leaves nothing behind).
class PlanFolderGuard {
 public:
  explicit PlanFolderGuard(fs::path folder) : folder_(std::move(folder)) {}
  ~PlanFolderGuard() {
    std::error_code error;
    if (!folder_.empty()) fs::remove_all(folder_, error);
  }
  void release() { folder_.clear(); }

 private:
  fs::path folder_;
};

}  // namespace

const std::vector<std::string>& packageVariantPrecisions() {
  static const std::vector<std::string> precisions = {"fp32", "fp16", "autotune"};
  return precisions;
}

Result<PackagePlan> planPackage(const PackageOptions& options, const std::string& planFolder) {
  KILN_RETURN_IF_ERROR(checkOptions(options));
  const fs::path folder = fs::absolute(planFolder).lexically_normal();
  std::error_code error;
  if (fs::exists(folder, error)) return Status(StatusCode::INVALID_ARGUMENT, "plan folder '" + planFolder + "' exists");
  PlanFolderGuard guard(folder);
  const fs::path root = folder / kPackageFolder;
  ModelPackage package;
  package.component = fs::path(options.sourceModel).stem().string();
  const std::string component = package::componentFolder(package.component);
  KILN_ASSIGN_OR_RETURN(const std::vector<fs::path> sourceFiles, copySource(options.sourceModel, root / component / "source"));
  for (const auto& file : sourceFiles) {
    KILN_ASSIGN_OR_RETURN(PackageFile packaged, packageFile(root, file));
    package.sourceFiles.push_back(std::move(packaged));
  }
  package.sourceModel = package.sourceFiles.front().path;

  PackagePlan plan;
  plan.folder = folder.string();
  plan.outputFolder = fs::absolute(options.outputFolder).lexically_normal().string();
  const std::vector<std::string> profiles = options.profiles.empty() ? std::vector<std::string>{""} : options.profiles;
  const std::string selector = options.sessionOptions.configEntryOr(config::kVulkanDevice, "");
  std::set<std::string> names;
  for (const std::string& profile : profiles) {
    KILN_ASSIGN_OR_RETURN(const std::string device, targetDevice(profile, selector));
    for (const std::string& precision : options.precisions) {
      PackageVariantPlan variant;
      variant.name = targetName(profile) + "-" + precision;
      for (int n = 2; !names.insert(variant.name).second; ++n) variant.name = targetName(profile) + "-" + precision + "-" + std::to_string(n);
      variant.profile = profile.empty() ? "" : fs::absolute(profile).lexically_normal().string();
      variant.precision = precision;
      variant.device = device;
      variant.sourceModel = (root / package.sourceModel).string();
      variant.ctxModel = (root / component / variant.name / (package.component + "_ctx.onnx")).string();
      variant.config[config::kEnableWeightlessEpContextNodes] = "1";
      if (precision == "fp16") variant.config[config::kVulkanFp16] = "1";
      if (precision == "autotune") variant.config[config::kVulkanAutotune] = "1";
      plan.variants.push_back(std::move(variant));
    }
  }
  const std::string text = planJson(plan, package).dump(2) + "\n";
  KILN_RETURN_IF_ERROR(writeFileAtomically((folder / kPlanFile).string(), std::as_bytes(std::span(text))));
  guard.release();
  return plan;
}

Result<ModelPackage> assemblePackage(const std::string& planFolder, bool overwrite) {
  const fs::path folder = fs::absolute(planFolder).lexically_normal();
  KILN_ASSIGN_OR_RETURN(auto planned, readPlan(folder));
  auto& [plan, package] = planned;
  const fs::path root = folder / kPackageFolder;
  std::string missing;
  std::error_code error;
  for (const auto& variant : plan.variants) {
    if (!fs::is_regular_file(variant.ctxModel, error)) missing += (missing.empty() ? "" : ", ") + variant.name;
  }
  if (!missing.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "the package plan in '" + planFolder + "' has variants not compiled yet: " + missing);
  }
  for (const auto& variant : plan.variants) {
    auto described = describeVariant(root, variant);
    if (!described.isOk()) return described.status().withContext("variant " + variant.name);
    package.variants.push_back(std::move(described).value());
  }
  KILN_RETURN_IF_ERROR(package::writeDescriptors(package, root.string()));
  for (const auto& entry : fs::recursive_directory_iterator(root, error)) {
    if (entry.is_regular_file(error)) package.totalBytes += entry.file_size(error);
  }
  for (const auto& file : package.sourceFiles) package.sharedBytes += file.size;
  KILN_RETURN_IF_ERROR(publish(root, plan.outputFolder, overwrite));
  fs::remove_all(folder, error);
  package.path = plan.outputFolder;
  return package;
}

Result<ModelPackage> packageModel(const PackageOptions& options) {
  KILN_RETURN_IF_ERROR(checkOptions(options));
  const fs::path destination = fs::absolute(options.outputFolder).lexically_normal();
  const fs::path planFolder = destination.parent_path() / ("." + destination.filename().string() + ".staging-" + std::to_string(::getpid()));
  std::error_code error;
  fs::remove_all(planFolder, error);
  KILN_ASSIGN_OR_RETURN(const PackagePlan plan, planPackage(options, planFolder.string()));
  PlanFolderGuard guard(planFolder);
  const auto total = static_cast<int64_t>(plan.variants.size());
  for (size_t i = 0; i < plan.variants.size(); ++i) {
    const PackageVariantPlan& variant = plan.variants[i];
    options.sessionOptions.progress.report("variant " + variant.name, static_cast<int64_t>(i), total);
    if (options.sessionOptions.progress.cancelled()) return Status(StatusCode::CANCELLED, "packaging cancelled");
    ModelCompilationOptions compile(options.sessionOptions);
    for (const auto& [key, value] : variant.config) KILN_RETURN_IF_ERROR(compile.sessionOptions().addConfigEntry(key, value));
    if (!variant.profile.empty()) compile.setTargetProfile(variant.profile);
    compile.setInputModelPath(variant.sourceModel).setOutputModelPath(variant.ctxModel);
    compile.setFlags(CompileFlags::ERROR_IF_NO_NODES_COMPILED);
    auto compiled = compileModel(compile);
    if (!compiled.isOk()) return compiled.status().withContext("variant " + variant.name);
  }
  KILN_ASSIGN_OR_RETURN(ModelPackage package, assemblePackage(planFolder.string(), options.overwrite));
  guard.release();  // assemblePackage removed it
  options.sessionOptions.progress.report("variant", total, total);
  return package;
}

bool isModelPackage(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_regular_file(fs::path(path) / package::kManifestFile, error);
}

Result<ModelPackage> readModelPackage(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(ModelPackage package, package::readDescriptors(path));
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(path, error)) {
    if (entry.is_regular_file(error)) package.totalBytes += entry.file_size(error);
  }
  for (const auto& file : package.sourceFiles) package.sharedBytes += file.size;
  return package;
}

}  // namespace kiln
