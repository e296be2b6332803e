// What a compile writes and where, as plain types: the flags, where initializers and context binaries go, the
// callbacks that receive them, and the default file names. kiln/compiler.h (the Compile API) builds on these; the
// layers that write EPContext models use them without the session's options.
#pragma once

#include "kiln/export.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/provider_names.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

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

// The default names: "dir/model.onnx" -> "dir/model_ctx.onnx" and "dir/model_vulkan.bin"; for a ctx model
// "dir/model_ctx.onnx" -> "dir/model_vulkan.bin". The binary is named after the execution provider whose
// partitions it holds: its name without "ExecutionProvider", lower-cased ("vulkan"; "reference" for a
// ReferenceExecutionProvider).
KILN_EXPORT std::string defaultCtxModelPath(const std::string& modelPath);
KILN_EXPORT std::string defaultContextBinaryPath(const std::string& modelPath,
                                                 const std::string& executionProvider = kVulkanExecutionProvider);

// ONNX Runtime's folder rule for output paths: a trailing separator, an existing directory or a name without an
// extension is a folder.
KILN_EXPORT bool namesFolder(const std::string& path);

// Returns the bytes of the context binary the ctx model names `name` (its ep_cache_context), or an error: how a
// session reads back what a ContextDataWriteFunc received (SessionOptions::setContextDataReadFunction).
using ContextDataReadFunc = std::function<Result<std::vector<std::byte>>(const std::string& name)>;

}  // namespace kiln
