// kiln::packageModel: the source copied in once, one weightless compile per (profile, precision), descriptors
// written, and the folder published with one rename.
#include <unistd.h>

#include <filesystem>
#include <set>

#include "kiln/compatibility.h"
#include "kiln/compiler.h"
#include "kiln/config_keys.h"
#include "kiln/device.h"
#include "kiln/model_package.h"
#include "kiln/provider_names.h"
#include "onnx/model_loader.h"
#include "package/file_digest.h"
#include "package/package_manifest.h"
#include "util/log.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The folder a package is assembled in, beside its destination; removed unless published.
class StagingFolder {
 public:
  explicit StagingFolder(const fs::path& destination)
      : path_(destination.parent_path() / ("." + destination.filename().string() + ".staging-" + std::to_string(::getpid()))) {}
  ~StagingFolder() {
    if (!published_) {
      std::error_code error;
      fs::remove_all(path_, error);
    }
  }
  const fs::path& path() const { return path_; }
  // Moves the staged package to `destination`, replacing an existing one (moved aside first, then removed).
  Status publish(const fs::path& destination) {
    std::error_code error;
    const fs::path aside = destination.string() + ".replaced-" + std::to_string(::getpid());
    const bool replacing = fs::exists(destination, error);
    if (replacing) {
      fs::rename(destination, aside, error);
      if (error) return Status(StatusCode::FAIL, "cannot move the old package aside: " + error.message());
    }
    fs::rename(path_, destination, error);
    if (error) {
      if (replacing) fs::rename(aside, destination, error);
      return Status(StatusCode::FAIL, "cannot publish the package at '" + destination.string() + "': " + error.message());
    }
    published_ = true;
    if (replacing) fs::remove_all(aside, error);
    return Status::ok();
  }

 private:
  fs::path path_;
  bool published_ = false;
};

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
    const fs::path relative = data.lexically_relative(sourceFolder);
    const fs::path target = folder / relative;
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

}  // namespace

const std::vector<std::string>& packageVariantPrecisions() {
  static const std::vector<std::string> precisions = {"fp32", "fp16", "autotune"};
  return precisions;
}

Result<ModelPackage> packageModel(const PackageOptions& options) {
  KILN_RETURN_IF_ERROR(checkOptions(options));
  const fs::path destination = fs::absolute(options.outputFolder).lexically_normal();
  StagingFolder staging(destination);
  std::error_code error;
  fs::remove_all(staging.path(), error);
  ModelPackage package;
  package.component = fs::path(options.sourceModel).stem().string();
  const std::string component = package::componentFolder(package.component);
  KILN_ASSIGN_OR_RETURN(const std::vector<fs::path> sourceFiles, copySource(options.sourceModel, staging.path() / component / "source"));
  for (const auto& file : sourceFiles) {
    KILN_ASSIGN_OR_RETURN(PackageFile packaged, packageFile(staging.path(), file));
    package.sharedBytes += packaged.size;
    package.sourceFiles.push_back(std::move(packaged));
  }
  package.sourceModel = package.sourceFiles.front().path;

  const std::vector<std::string> profiles = options.profiles.empty() ? std::vector<std::string>{""} : options.profiles;
  const std::string selector = options.sessionOptions.configEntryOr(config::kVulkanDevice, "");
  std::set<std::string> names;
  const int64_t total = static_cast<int64_t>(profiles.size() * options.precisions.size());
  for (const std::string& profile : profiles) {
    KILN_ASSIGN_OR_RETURN(const std::string device, targetDevice(profile, selector));
    for (const std::string& precision : options.precisions) {
      PackageVariant variant;
      variant.name = targetName(profile) + "-" + precision;
      for (int n = 2; !names.insert(variant.name).second; ++n) variant.name = targetName(profile) + "-" + precision + "-" + std::to_string(n);
      options.sessionOptions.progress.report("variant " + variant.name, static_cast<int64_t>(package.variants.size()), total);
      if (options.sessionOptions.progress.cancelled()) return Status(StatusCode::CANCELLED, "packaging cancelled");
      ModelCompilationOptions compile(options.sessionOptions);
      SessionOptions& session = compile.sessionOptions();
      KILN_RETURN_IF_ERROR(session.addConfigEntry(config::kEnableWeightlessEpContextNodes, "1"));
      if (precision == "fp16") KILN_RETURN_IF_ERROR(session.addConfigEntry(config::kVulkanFp16, "1"));
      if (precision == "autotune") KILN_RETURN_IF_ERROR(session.addConfigEntry(config::kVulkanAutotune, "1"));
      if (!profile.empty()) compile.setTargetProfile(profile);
      const fs::path folder = staging.path() / component / variant.name;
      const fs::path ctxModel = folder / (package.component + "_ctx.onnx");
      compile.setInputModelPath((staging.path() / package.sourceModel).string());
      compile.setOutputModelPath(ctxModel.string());
      compile.setFlags(CompileFlags::ERROR_IF_NO_NODES_COMPILED);
      auto compiled = compileModel(compile);
      if (!compiled.isOk()) return compiled.status().withContext("variant " + variant.name);
      variant.executionProvider = kVulkanExecutionProvider;
      variant.device = device;
      variant.profile = profile.empty() ? "" : fs::path(profile).filename().string();
      variant.precision = precision;
      variant.compileIdentity = compiled->compileIdentity;
      variant.ctxModel = ctxModel.lexically_relative(staging.path()).generic_string();
      KILN_ASSIGN_OR_RETURN(variant.compatibilityInfo, getCompatibilityInfoFromModel(ctxModel.string()));
      for (const auto& written : compiled->filesWritten) {
        KILN_ASSIGN_OR_RETURN(PackageFile file, packageFile(staging.path(), fs::absolute(written).lexically_normal()));
        variant.files.push_back(std::move(file));
      }
      package.variants.push_back(std::move(variant));
    }
  }
  KILN_RETURN_IF_ERROR(package::writeDescriptors(package, staging.path().string()));
  for (const auto& entry : fs::recursive_directory_iterator(staging.path(), error)) {
    if (entry.is_regular_file(error)) package.totalBytes += entry.file_size(error);
  }
  KILN_RETURN_IF_ERROR(staging.publish(destination));
  package.path = destination.string();
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
