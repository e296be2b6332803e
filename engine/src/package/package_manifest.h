// A model package's descriptors on disk (kiln/model_package.h has the layout): writing them, and reading them back
// with every check a hostile package needs (sizes, names, paths that must stay inside the package).
#pragma once

#include <cstddef>
#include <string>

#include "kiln/model_package.h"

namespace kiln::package {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kMetadataFile = "metadata.json";
inline constexpr const char* kVariantFile = "variant.json";
inline constexpr int kSchemaVersion = 1;           // onnxruntime's manifest schema_version
inline constexpr size_t kMaxDescriptorBytes = 1 << 20;  // a larger manifest, metadata or variant.json is refused
inline constexpr size_t kMaxComponents = 64, kMaxVariants = 256, kMaxFilesPerVariant = 64;

// The folder of a component, relative to the package: "models/<component>".
std::string componentFolder(const std::string& component);

// Writes manifest.json, the component's metadata.json and each variant's variant.json under `folder` (the files
// the descriptors name must already be there).
Status writeDescriptors(const ModelPackage& package, const std::string& folder);

// Reads the descriptors of the package at `folder`. The first component is Kiln's (a package with several is read,
// the others are listed in no variant). Paths come back relative to `folder`, each checked to stay inside it.
Result<ModelPackage> readDescriptors(const std::string& folder);

}  // namespace kiln::package
