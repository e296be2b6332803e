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

#include "kiln/compile_outputs.h"
#include "kiln/context_binary.h"
#include "kiln/session_options.h"
#include "kiln/tensor.h"
#include "kiln/timings.h"

namespace kiln {

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

  // true: when the output model (a file) exists whole and records the compile identity this compile would have
  // (source content, result-changing options, Kiln, compiler, target device), nothing is compiled or written and
  // the result says so (CompileResult::reused); kiln compile's default. false (default): always compile, as ONNX
  // Runtime's CompileModel does. Either way, compiles into the same output path take turns (a lock beside it).
  ModelCompilationOptions& setReuseUpToDateOutputs(bool reuse);

  // What setReuseUpToDateOutputs() set.
  bool reuseUpToDateOutputs() const { return reuseUpToDate_; }
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
  bool reuseUpToDate_ = false;
  int inputsSet_ = 0, outputsSet_ = 0;
};

struct KILN_EXPORT CompileResult {
  std::string outputModelPath;     // empty when the output went to a buffer or callback
  std::string binaryPath;          // empty with embed mode 1 or when nothing compiled
  std::string externalInitializersPath;
  int epContextNodes = 0;          // 0: nothing compiled (a plain optimized model was written)
  std::vector<std::string> filesWritten;
  std::string compileIdentity;  // the outputs' compile identity (16 hex digits; "" when not recorded)
  bool reused = false;          // setReuseUpToDateOutputs: the outputs were up to date, nothing was written
  std::vector<std::string> recompileReasons;  // setReuseUpToDateOutputs: why existing outputs were not reused
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

}  // namespace kiln
