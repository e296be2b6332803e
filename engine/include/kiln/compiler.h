// Compiling models ahead of time, as ONNX Runtime's Compile API does: a model goes in (path or bytes); an EPContext
// model comes out (path, bytes or a write callback) whose com.microsoft EPContext nodes point at (or embed) a Vulkan
// context binary. Sessions created from it load in milliseconds: no optimizer, no glslang, no prepacking.
//
// The session-option flow (ep.context_enable=1 on any Session::create) writes the same files as a side effect;
// this API is the explicit one: it overwrites unless told not to, writes a plain optimized model when nothing
// compiles (unless told not to), and refuses an input that is already compiled.
#pragma once

#include "kiln/export.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/context_binary.h"
#include "kiln/session_options.h"
#include "kiln/tensor.h"
#include "kiln/timings.h"

namespace kiln {

// ONNX Runtime's OrtCompileApiFlags (same bit values); combine with |.
enum class CompileFlags : uint32_t {
  NONE = 0,
  ERROR_IF_NO_NODES_COMPILED = 1u << 0,   // FAIL "Unable to compile any nodes" instead of writing a plain model
  ERROR_IF_OUTPUT_FILE_EXISTS = 1u << 1,  // FAIL before compiling when the output model exists (default: overwrite)
};

// The union of two flag sets.
constexpr CompileFlags operator|(CompileFlags a, CompileFlags b) {
  return static_cast<CompileFlags>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
// The flags set in both.
constexpr CompileFlags operator&(CompileFlags a, CompileFlags b) {
  return static_cast<CompileFlags>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}
// True when `flags` includes every flag of `flag`.
constexpr bool hasFlag(CompileFlags flags, CompileFlags flag) { return (flags & flag) == flag; }
// `flag` when `on`, else NONE: for building a set from booleans.
constexpr CompileFlags flagIf(bool on, CompileFlags flag) { return on ? flag : CompileFlags::NONE; }

// Where an initializer of the source model lives in its external-data file.
struct KILN_EXPORT ExternalInitializerInfo {
  std::string path;  // absolute
  int64_t offset = 0;
  int64_t size = 0;
};

// Where an initializer that stays in the output model (one a CPU-fallback node reads) goes.
struct KILN_EXPORT InitializerLocation {
  enum class Kind { EMBED, FILE, ORIGINAL };
  Kind kind = Kind::EMBED;
  // FILE: a file name relative to the output model's folder; Kiln appends the data there (64-byte aligned).
  std::string file;
  // The initializer is stored inside the output model.
  static InitializerLocation embed() { return {}; }
  // The initializer is appended to file `name` (relative to the output model's folder).
  static InitializerLocation inFile(std::string name) { return {Kind::FILE, std::move(name)}; }
  // The initializer stays where the source model had it (`original` must have been given; the file must sit in
  // the output model's folder or below it, as ONNX Runtime's path rules for external data require).
  static InitializerLocation keepOriginal() { return {Kind::ORIGINAL, {}}; }
};
// Called once per initializer of the output model; `original` is its source external-data location, if any.
using InitializerLocationFunc = std::function<InitializerLocation(
    const std::string& name, const Tensor& value, const ExternalInitializerInfo* original)>;

// Receives the output model in chunks; a non-OK status stops the compile with that status.
using OutputWriteFunc = std::function<Status(std::span<const std::byte> chunk)>;

// Receives the context binary instead of a file being written (onnxruntime's experimental
// SetEpContextDataWriteFunc, a named-buffer callback): `name` is the ep_cache_context the ctx model records (the
// binary's path relative to the ctx model). The bytes are only valid during the call. A non-OK status (or an
// exception) fails the compile and nothing is written.
using ContextDataWriteFunc = std::function<Status(const std::string& name, std::span<const std::byte> bytes)>;
// Receives the context binary `name` as consecutive chunks in file order, a binary of any size with at most one
// chunk of it held (onnxruntime's OrtWriteBufferFunc, called repeatedly, plus the name): each call with `last`
// false carries the next chunk (at most 4 MiB, valid during the call); one final call with `last` true and an
// empty chunk ends the binary. A non-OK status (or an exception) fails the compile and nothing is written.
using ContextDataStreamFunc = std::function<Status(const std::string& name, std::span<const std::byte> chunk, bool last)>;

class KILN_EXPORT ModelCompilationOptions {
 public:
  // Starts from `sessionOptions` (config entries such as kiln.vulkan.device, progress and cancellation).
  explicit ModelCompilationOptions(SessionOptions sessionOptions = {});

  // The model to compile, from a file (exclusive with setInputModelFromBuffer).
  ModelCompilationOptions& setInputModelPath(std::string path);
  // The bytes are borrowed: they must outlive compileModel().
  ModelCompilationOptions& setInputModelFromBuffer(std::span<const std::byte> bytes);
  // Where the EPContext model goes (default: <input stem>_ctx.onnx beside the input); one output kind only.
  ModelCompilationOptions& setOutputModelPath(std::string path);
  // The serialized output model is stored in `*buffer` (which must outlive compileModel()).
  ModelCompilationOptions& setOutputModelBuffer(std::vector<std::byte>* buffer);
  // The output model is passed to `write` in chunks.
  ModelCompilationOptions& setOutputModelWriteFunc(OutputWriteFunc write);
  // Initializers of at least `sizeThreshold` bytes (default 1024, as ONNX Runtime's Python API) go to `path`,
  // relative to the output model's folder. Exclusive with setOutputModelGetInitializerLocationFunc.
  ModelCompilationOptions& setOutputModelExternalInitializersFile(std::string path, size_t sizeThreshold = 1024);
  // `func` decides, per initializer, where it goes (exclusive with setOutputModelExternalInitializersFile).
  ModelCompilationOptions& setOutputModelGetInitializerLocationFunc(InitializerLocationFunc func);
  // true: the context binary is embedded in the EPContext node; false (default): a separate file.
  ModelCompilationOptions& setEpContextEmbedMode(bool embed);
  // Replaces the flags (default NONE).
  ModelCompilationOptions& setFlags(CompileFlags flags);
  // Where the binary goes when the output model is not a file (buffer or callback) and embed mode is 0:
  // <directory>/<modelName stem>_vulkan.bin; at load set ep.context_file_path=<directory>/<modelName>.
  ModelCompilationOptions& setEpContextBinaryInformation(std::string directory, std::string modelName);
  // Overrides kiln.graph_optimization_level (unset: the session options' value, else basic).
  ModelCompilationOptions& setGraphOptimizationLevel(GraphOptimizationLevel level);
  // Cross-compile for a device profile JSON instead of a live device (kiln.vulkan.target_profile).
  ModelCompilationOptions& setTargetProfile(std::string profilePath);
  // Prefix for EPContext node and partition names (ep.context_node_name_prefix).
  ModelCompilationOptions& setNodeNamePrefix(std::string prefix);
  // The context binary goes to `write` instead of its file (embed mode 0 only: an embedded binary is in the model).
  // Load such a model with SessionOptions::setContextDataReadFunction.
  ModelCompilationOptions& setContextDataWriteFunction(ContextDataWriteFunc write);
  // The context binary is streamed to `write` in chunks instead of being written to its file or handed over whole
  // (embed mode 0 only). Replaces setContextDataWriteFunction (one destination for the binary).
  ModelCompilationOptions& setContextDataStreamFunction(ContextDataStreamFunc write);

  // The embed mode setEpContextEmbedMode() set.
  bool embedMode() const { return embed_; }
  // The flags setFlags() set.
  CompileFlags flags() const { return flags_; }
  // The session options the compile creates its session with.
  SessionOptions& sessionOptions() { return session_; }
  // The session options, read-only.
  const SessionOptions& sessionOptions() const { return session_; }

 private:
  friend struct CompileRequest;
  SessionOptions session_;
  std::string inputPath_;
  std::optional<std::span<const std::byte>> inputBuffer_;
  std::string outputPath_;
  std::vector<std::byte>* outputBuffer_ = nullptr;
  OutputWriteFunc outputWrite_;
  std::string externalInitializersFile_;
  size_t externalThreshold_ = 1024;
  InitializerLocationFunc initializerLocation_;
  bool embed_ = false;
  CompileFlags flags_ = CompileFlags::NONE;
  std::string binaryDirectory_, binaryModelName_;
  std::optional<GraphOptimizationLevel> optimizationLevel_;
  std::string targetProfile_;
  std::string prefix_;
  ContextDataWriteFunc contextDataWrite_;
  ContextDataStreamFunc contextDataStream_;
  int inputsSet_ = 0, outputsSet_ = 0;
};

struct KILN_EXPORT CompileResult {
  std::string outputModelPath;     // empty when the output went to a buffer or callback
  std::string binaryPath;          // empty with embed mode 1 or when nothing compiled
  std::string externalInitializersPath;
  int epContextNodes = 0;          // 0: nothing compiled (a plain optimized model was written)
  std::vector<std::string> filesWritten;
  SessionTimings timings;
  WorkCounters counters;
};

// Compiles as ONNX Runtime's CompileModel does. Errors: INVALID_ARGUMENT for missing or conflicting inputs and
// outputs and for an output path naming a folder; FAIL for ERROR_IF_* flags; INVALID_GRAPH for an input that is
// already compiled; CANCELLED; the session's errors. Nothing is written unless everything succeeded: outputs go
// to temporary names and are renamed at the end, so an existing file is never damaged.
KILN_EXPORT Result<CompileResult> compileModel(const ModelCompilationOptions& options);

// ONNX Runtime's ep_weight_sharing_ctx_gen in one call: N models compiled with shared EP contexts, giving N ctx
// models (<stem>_ctx.onnx beside each input, or under `outputFolder` when given) and one binary named after the
// first model, holding every graph with weights deduplicated across the models. `prefixes` (empty, or one per
// model) go to node and graph names; without them each model's stem plus "_" is used so graph names stay unique.
// All N+1 files are written only when every model compiled. Embed mode 1 is INVALID_ARGUMENT.
KILN_EXPORT Result<std::vector<CompileResult>> compileModelsSharingContext(const std::vector<std::string>& modelPaths,
                                                               const ModelCompilationOptions& common,
                                                               const std::vector<std::string>& prefixes = {},
                                                               const std::string& outputFolder = {});

// The default names: "dir/model.onnx" -> "dir/model_ctx.onnx" and "dir/model_vulkan.bin"; for a ctx model
// "dir/model_ctx.onnx" -> "dir/model_vulkan.bin".
KILN_EXPORT std::string defaultCtxModelPath(const std::string& modelPath);
KILN_EXPORT std::string defaultContextBinaryPath(const std::string& modelPath);

// ONNX Runtime's folder rule for output paths: a trailing separator, an existing directory or a name without an
// extension is a folder.
KILN_EXPORT bool namesFolder(const std::string& path);

}  // namespace kiln
