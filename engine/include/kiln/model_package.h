// Model packages: one folder holding several compiled variants of one source model (per device profile and
// precision) and the source itself, from which a session picks the variant that fits the device present.
// The layout follows onnxruntime's experimental model package (OrtModelPackageApi): manifest.json names the
// components; models/<component>/metadata.json lists each variant's EP compatibility; models/<component>/<variant>/
// variant.json lists the files a session loads. Kiln adds a "kiln" object at each level: file digests
// ("sha256:<hex>") and sizes, the variant's profile, precision and compile identity, and the shared source.
// Variants are weightless (their binaries refer to the packaged source's weights), so weights are stored once.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/compatibility.h"
#include "kiln/session_options.h"
#include "kiln/status.h"

namespace kiln {

// The precisions a package variant may have: "fp32" (the default), "fp16" (kiln.vulkan.fp16=1) and "autotune"
// (float32, kernels timed on the live device at compile: kiln.vulkan.autotune=1).
KILN_EXPORT const std::vector<std::string>& packageVariantPrecisions();

struct KILN_EXPORT PackageOptions {
  std::string sourceModel;             // the ONNX model to package (copied into the package with its external data)
  std::vector<std::string> profiles;   // device profile JSON files; empty: the live device (kiln.vulkan.device)
  std::vector<std::string> precisions = {"fp32"};
  std::string outputFolder;            // the package folder, conventionally <stem>.kilnpkg
  bool overwrite = false;              // replace an existing package (else ALREADY_EXISTS-style INVALID_ARGUMENT)
  SessionOptions sessionOptions;       // config entries every compile gets (optimization level, shapes), progress
};

struct KILN_EXPORT PackageFile {
  std::string path;    // relative to the package folder
  std::string digest;  // "sha256:<64 hex digits>"
  uint64_t size = 0;
};

struct KILN_EXPORT PackageVariant {
  std::string name;               // "lavapipe-fp16": the profile's file stem (or "device") and the precision
  std::string executionProvider;  // "VulkanExecutionProvider"
  std::string device;             // the device the variant was compiled for, as its profile (or the live device) names it
  std::string profile;            // the profile file the variant was compiled for, as given ("" for the live device)
  std::string precision;          // "fp32", "fp16", "autotune"
  std::string compatibilityInfo;  // the ctx model's ep_compatibility_info string (onnxruntime's compatibility_string)
  std::string compileIdentity;
  std::string ctxModel;           // the file a session loads, relative to the package folder
  std::vector<PackageFile> files;  // the variant's own files (ctx model, binary)
  std::map<std::string, std::string> sessionOptions;  // config entries to load it with (kiln.vulkan.fp16, ...)
};

struct KILN_EXPORT ModelPackage {
  std::string path;  // the package folder
  int schemaVersion = 1;
  std::string component;             // the one component Kiln writes: the source model's stem
  std::string sourceModel;           // relative to the package folder
  std::vector<PackageFile> sourceFiles;  // the source model and its external data, shared by every variant
  std::vector<PackageVariant> variants;
  // Bytes on disk: the whole package, and what its variants would take compiled one by one with their weights.
  uint64_t totalBytes = 0;
  uint64_t sharedBytes = 0;  // the source files: stored once, read by every variant
};

// True when `path` is a folder holding a manifest.json (what Session::create and the tools treat as a package).
KILN_EXPORT bool isModelPackage(const std::string& path);

// Compiles the source once per (profile, precision) and assembles the package in a temporary folder beside
// `outputFolder`, renamed into place only when every variant compiled: a half-built package is never visible.
// INVALID_ARGUMENT for an unknown precision, no source, or an existing output without `overwrite`; the compile's
// errors (with the variant named) otherwise.
KILN_EXPORT Result<ModelPackage> packageModel(const PackageOptions& options);

// A package split into steps, for compiling its variants elsewhere (kiln package --plan writes a kiln batch jobs
// file from it, which runs locally or on Slurm): the plan folder holds plan.json and package/, the package being
// assembled, with the source already copied in; each variant is one compile of `sourceModel` into `ctxModel` with
// the config entries `config` (weightless, its precision) and `profile` as the target (live device when "").
struct KILN_EXPORT PackageVariantPlan {
  std::string name, profile, precision, device;
  std::string sourceModel;  // absolute
  std::string ctxModel;     // absolute: where the compile writes the variant's ctx model (its binary beside it)
  std::map<std::string, std::string> config;
};
struct KILN_EXPORT PackagePlan {
  std::string folder;        // the plan folder
  std::string outputFolder;  // where assemblePackage publishes the package
  std::vector<PackageVariantPlan> variants;
};

// Checks `options` as packageModel does, copies the source into `planFolder`/package/ and writes
// `planFolder`/plan.json. INVALID_ARGUMENT when `planFolder` exists.
KILN_EXPORT Result<PackagePlan> planPackage(const PackageOptions& options, const std::string& planFolder);
// Once every variant of the plan compiled: digests, descriptors, and the package published at the plan's output
// folder with one rename (replacing an existing one only with `overwrite`); the plan folder is removed.
// INVALID_ARGUMENT naming the variants whose compile is missing (nothing is published).
KILN_EXPORT Result<ModelPackage> assemblePackage(const std::string& planFolder, bool overwrite);

// Reads and checks a package's manifest, metadata and variant descriptors (not the file digests: see
// choosePackageVariant). INVALID_ARGUMENT for a hostile or malformed package: a file outside the folder, a missing
// descriptor, an oversized or malformed manifest, duplicate names; NO_SUCHFILE when there is no manifest.
KILN_EXPORT Result<ModelPackage> readModelPackage(const std::string& path);

// One variant as judged for this machine.
struct KILN_EXPORT PackageVariantJudgement {
  std::string variant;
  CompiledModelCompatibility state = CompiledModelCompatibility::UNSUPPORTED;
  bool precisionMatches = false;
  std::vector<std::string> reasons;  // tampered or missing files, device differences, staleness
};

struct KILN_EXPORT PackageChoice {
  std::vector<PackageVariantJudgement> judged;  // in package order
  int chosen = -1;               // index into judged / the package's variants; -1: none fits
  std::string modelPath;         // what to load: the chosen variant's ctx model, or the packaged source
  std::map<std::string, std::string> sessionOptions;  // the chosen variant's config entries
  std::string against;           // the device judged against
  std::string summary;           // one line: what was chosen and why (or why the source is compiled)
};

// Picks the variant for the device `options` select (kiln.vulkan.device) and the precision they ask for
// (kiln.vulkan.fp16=1: fp16, kiln.vulkan.autotune=1: autotune, else fp32): every variant's files are checked
// against their digests (a mismatch makes it UNSUPPORTED, never loaded), then judged by getModelCompatibility;
// SUPPORTED_OPTIMAL beats SUPPORTED_PREFER_RECOMPILATION, then the requested precision, then the fewest differences
// from the device, then package order. With no variant fitting, the packaged source is chosen (a session compiles
// it; session.disable_model_compile=1 makes that MODEL_REQUIRES_COMPILATION).
KILN_EXPORT Result<PackageChoice> choosePackageVariant(const ModelPackage& package, const SessionOptions& options);

}  // namespace kiln
