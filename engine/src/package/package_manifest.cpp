#include "package/package_manifest.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "kiln/version.h"
#include "onnx/path_rules.h"
#include "util/file_io.h"

namespace kiln::package {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // variants keep the order they were written in

Status invalid(const std::string& where, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT, "model package: " + where + ": " + why);
}

Json filesJson(const std::vector<PackageFile>& files, const std::string& relativeTo) {
  Json list = Json::array();
  for (const auto& file : files) {
    list.push_back({{"filename", fs::path(file.path).lexically_relative(relativeTo).generic_string()},
                    {"digest", file.digest},
                    {"size", file.size}});
  }
  return list;
}

Status writeJson(const fs::path& path, const Json& json) {
  const std::string text = json.dump(2) + "\n";
  return writeFileAtomically(path.string(), std::as_bytes(std::span(text)));
}

// A descriptor file as JSON: INVALID_ARGUMENT when missing, larger than kMaxDescriptorBytes or not a JSON object.
Result<Json> readJson(const fs::path& folder, const std::string& relative) {
  const fs::path path = folder / relative;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    const StatusCode code = relative == kManifestFile ? StatusCode::NO_SUCHFILE : StatusCode::INVALID_ARGUMENT;
    return Status(code, "model package: " + relative + " is missing in '" + folder.string() + "'");
  }
  const auto size = fs::file_size(path, error);
  if (error || size > kMaxDescriptorBytes) {
    return invalid(relative, "larger than " + std::to_string(kMaxDescriptorBytes) + " bytes");
  }
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path.string()));
  Json json = Json::parse(reinterpret_cast<const char*>(bytes.data()), reinterpret_cast<const char*>(bytes.data()) + bytes.size(),
                          nullptr, false);
  if (json.is_discarded() || !json.is_object()) return invalid(relative, "not a JSON object");
  return json;
}

std::string stringField(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A name used as one path component (component, variant): letters, digits, '-', '_', '.', not "." or "..".
bool isPlainName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// `relative` (from `base`, itself relative to the package) checked to stay inside the package and to be a plain
// regular file when it exists: the package-relative path.
Result<std::string> containedFile(const fs::path& package, const std::string& base, const std::string& relative,
                                  const std::string& where) {
  if (relative.empty()) return invalid(where, "a file entry has no filename");
  auto resolved = resolveContainedPath(package, (fs::path(base) / relative).string(), "file '" + relative + "'");
  if (!resolved.isOk()) return invalid(where, resolved.status().message());
  std::error_code error;
  if (fs::is_symlink(fs::path(package) / base / relative, error)) return invalid(where, "'" + relative + "' is a symbolic link");
  const fs::path root = fs::weakly_canonical(fs::absolute(package), error);
  return fs::weakly_canonical(*resolved, error).lexically_relative(root).generic_string();
}

Result<std::vector<PackageFile>> readFiles(const Json& list, const fs::path& package, const std::string& base,
                                           const std::string& where) {
  if (!list.is_array()) return invalid(where, "\"files\" is not a list");
  if (list.size() > kMaxFilesPerVariant) return invalid(where, "more than " + std::to_string(kMaxFilesPerVariant) + " files");
  std::vector<PackageFile> files;
  for (const auto& entry : list) {
    if (!entry.is_object()) return invalid(where, "a file entry is not an object");
    PackageFile file;
    KILN_ASSIGN_OR_RETURN(file.path, containedFile(package, base, stringField(entry, "filename"), where));
    file.digest = stringField(entry, "digest");
    if (file.digest.rfind("sha256:", 0) != 0 || file.digest.size() != 7 + 64) {
      return invalid(where, "file '" + file.path + "' has no sha256 digest");
    }
    const auto size = entry.find("size");
    if (size == entry.end() || !size->is_number_unsigned()) return invalid(where, "file '" + file.path + "' has no size");
    file.size = size->get<uint64_t>();
    files.push_back(std::move(file));
  }
  return files;
}

}  // namespace

std::string componentFolder(const std::string& component) { return "models/" + component; }

Status writeDescriptors(const ModelPackage& package, const std::string& folder) {
  const fs::path root(folder);
  const std::string component = componentFolder(package.component);
  Json manifest = {{"schema_version", kSchemaVersion},
                   {"components", Json::array({package.component})},
                   {"kiln", {{"format_version", 1}, {"created_by", std::string("Kiln ") + engineVersion()}}}};
  KILN_RETURN_IF_ERROR(writeJson(root / kManifestFile, manifest));

  Json variants = Json::object();
  for (const auto& variant : package.variants) {
    const std::string variantFolder = component + "/" + variant.name;
    Json sessionOptions = Json::object();
    for (const auto& [key, value] : variant.sessionOptions) sessionOptions[key] = value;
    Json descriptor = {{"files", Json::array({{{"filename", fs::path(variant.ctxModel).lexically_relative(variantFolder).generic_string()},
                                               {"session_options", sessionOptions}}})},
                       {"kiln", {{"files", filesJson(variant.files, variantFolder)}}}};
    KILN_RETURN_IF_ERROR(writeJson(root / variantFolder / kVariantFile, descriptor));
    variants[variant.name] = {
        {"ep_compatibility", Json::array({{{"ep", variant.executionProvider},
                                           {"device", "gpu"},  // onnxruntime's device class: a Vulkan device
                                           {"compatibility_string", variant.compatibilityInfo}}})},
        {"kiln", {{"device", variant.device},
                  {"profile", variant.profile},
                  {"precision", variant.precision},
                  {"compile_identity", variant.compileIdentity}}}};
  }
  Json metadata = {{"component_name", package.component},
                   {"variants", variants},
                   {"kiln", {{"source", {{"model", fs::path(package.sourceModel).lexically_relative(component).generic_string()},
                                         {"files", filesJson(package.sourceFiles, component)}}}}}};
  return writeJson(root / component / kMetadataFile, metadata);
}

Result<ModelPackage> readDescriptors(const std::string& folder) {
  const fs::path root(folder);
  KILN_ASSIGN_OR_RETURN(const Json manifest, readJson(root, kManifestFile));
  ModelPackage package;
  package.path = folder;
  const auto version = manifest.find("schema_version");
  if (version == manifest.end() || !version->is_number_integer()) return invalid(kManifestFile, "no schema_version");
  package.schemaVersion = version->get<int>();
  if (package.schemaVersion != kSchemaVersion) {
    return invalid(kManifestFile, "schema_version " + std::to_string(package.schemaVersion) + " (this Kiln reads " +
                                      std::to_string(kSchemaVersion) + ")");
  }
  const auto components = manifest.find("components");
  if (components == manifest.end() || !components->is_array() || components->empty()) {
    return invalid(kManifestFile, "no components");
  }
  if (components->size() > kMaxComponents) return invalid(kManifestFile, "too many components");
  if (!components->front().is_string() || !isPlainName(components->front().get<std::string>())) {
    return invalid(kManifestFile, "a component name must be a plain file name");
  }
  package.component = components->front().get<std::string>();
  const std::string component = componentFolder(package.component);
  KILN_ASSIGN_OR_RETURN(const Json metadata, readJson(root, component + "/" + kMetadataFile));
  const std::string metadataName = component + "/" + kMetadataFile;
  if (const std::string named = stringField(metadata, "component_name"); !named.empty() && named != package.component) {
    return invalid(metadataName, "names component '" + named + "', the manifest '" + package.component + "'");
  }
  const auto kiln = metadata.find("kiln");
  if (kiln != metadata.end() && kiln->is_object() && kiln->contains("source") && (*kiln)["source"].is_object()) {
    const Json& source = (*kiln)["source"];
    KILN_ASSIGN_OR_RETURN(package.sourceModel, containedFile(root, component, stringField(source, "model"), metadataName));
    if (source.contains("files")) {
      KILN_ASSIGN_OR_RETURN(package.sourceFiles, readFiles(source["files"], root, component, metadataName));
    }
  }
  const auto variants = metadata.find("variants");
  if (variants == metadata.end() || !variants->is_object()) return invalid(metadataName, "no \"variants\" object");
  if (variants->size() > kMaxVariants) return invalid(metadataName, "more than " + std::to_string(kMaxVariants) + " variants");
  for (const auto& [name, entry] : variants->items()) {
    if (!isPlainName(name)) return invalid(metadataName, "variant name '" + name + "' is not a plain file name");
    if (!entry.is_object()) return invalid(metadataName, "variant '" + name + "' is not an object");
    PackageVariant variant;
    variant.name = name;
    if (const auto ep = entry.find("ep_compatibility"); ep != entry.end() && ep->is_array() && !ep->empty() && ep->front().is_object()) {
      variant.executionProvider = stringField(ep->front(), "ep");
      variant.compatibilityInfo = stringField(ep->front(), "compatibility_string");
    }
    if (const auto own = entry.find("kiln"); own != entry.end() && own->is_object()) {
      variant.device = stringField(*own, "device");
      variant.profile = stringField(*own, "profile");
      variant.precision = stringField(*own, "precision");
      variant.compileIdentity = stringField(*own, "compile_identity");
    }
    const std::string variantFolder = component + "/" + name;
    const std::string descriptorName = variantFolder + "/" + kVariantFile;
    KILN_ASSIGN_OR_RETURN(const Json descriptor, readJson(root, descriptorName));
    const auto files = descriptor.find("files");
    if (files == descriptor.end() || !files->is_array() || files->empty() || !files->front().is_object()) {
      return invalid(descriptorName, "no \"files\" to load");
    }
    KILN_ASSIGN_OR_RETURN(variant.ctxModel, containedFile(root, variantFolder, stringField(files->front(), "filename"), descriptorName));
    if (const auto options = files->front().find("session_options"); options != files->front().end() && options->is_object()) {
      for (const auto& [key, value] : options->items()) {
        if (value.is_string()) variant.sessionOptions[key] = value.get<std::string>();
      }
    }
    if (const auto own = descriptor.find("kiln"); own != descriptor.end() && own->is_object() && own->contains("files")) {
      KILN_ASSIGN_OR_RETURN(variant.files, readFiles((*own)["files"], root, variantFolder, descriptorName));
    }
    package.variants.push_back(std::move(variant));
  }
  std::set<std::string> seen;
  for (const auto& variant : package.variants) {
    if (!seen.insert(variant.name).second) return invalid(metadataName, "variant '" + variant.name + "' twice");
  }
  return package;
}

}  // namespace kiln::package
