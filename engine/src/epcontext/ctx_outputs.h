// The files of a compile, as bytes: the encoded context binary of the compiled partitions, the serialized ctx
// model that points at it (or embeds it), and the external-initializer files of the CPU-fallback initializers.
// Nothing here touches the disk: callers stage the bytes in a FileTransaction or hand them to a buffer.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "context_binary/ep_context_hooks.h"
#include "device/device_info.h"
#include "epcontext/weightless.h"
#include "kiln/compile_outputs.h"
#include "partition/compiled_model.h"
#include "util/file_io.h"

namespace kiln::epctx {

struct EncodedBinary {
  std::vector<std::byte> bytes;  // the whole binary (empty from prepareBinary: stream `prepared` instead)
  vk::DeviceInfo target;
  std::shared_ptr<const ctxbin::PreparedContextBinary> prepared;  // layout, hashes and the way to stream it
  const ctxbin::BinaryHead& head() const { return prepared->head(); }
};
// What a context binary carries beside the partitions (format 1.1 sections).
struct BinaryExtras {
  std::string compileRecord;                    // the COMPILE_RECORD section; "" writes none
  std::optional<WeightlessSources> weightless;  // set: a weightless binary (epcontext/weightless.h)
  // Initializers the compile left in their external-data file (type and shape only in the partitions): the binary
  // streams their bytes from these ranges.
  std::map<std::string, ctxbin::FileRange> externalWeights;
};
// The context binary of `partitions` (one EP's, for one target device; a live-device target carries the driver
// cache), its contents exported by the partitions' EP, whose hooks `providers` finds (ctxbin::exporterOf).
Result<EncodedBinary> encodeBinary(std::vector<CompiledPartition> partitions, const ctxbin::ContextHooksLookup& providers,
                                   const BinaryExtras& extras = {});
// The same laid out and hashed but not encoded: `bytes` stays empty and the caller streams `prepared` (a binary
// that need not fit in memory).
Result<EncodedBinary> prepareBinary(std::vector<CompiledPartition> partitions, const ctxbin::ContextHooksLookup& providers,
                                    const BinaryExtras& extras = {});
// Stages the binary at `path` in `files`, streamed into its temp file (never whole in memory).
Status stageBinary(FileTransaction& files, const std::string& path, const EncodedBinary& binary);

struct OutputLayout {
  int embedMode = 0;
  std::string modelFolder;          // the ctx model's folder: every relative reference resolves against it
  std::string binaryPath;           // embed mode 0: where the binary is written (inside modelFolder)
  std::string sourceModelFilename;  // onnx_model_filename
  std::string compileRecord;        // metadata kiln.compile_record (compile_record.h); "" writes none
  // Initializers that stay in the model: to this file (relative to modelFolder) when at least `externalThreshold`
  // bytes; or where `locationFunc` says; else embedded.
  std::string externalInitializersFile;
  size_t externalThreshold = 0;
  InitializerLocationFunc locationFunc;
  const std::map<std::string, ExternalInitializerInfo>* originals = nullptr;  // source external-data locations
  // A sharing group's models may name the same external-initializer file: when set, initializers are appended to
  // the files here (after what earlier models put there) and ModelFiles::dataFiles stays empty; the caller stages
  // these files once, after the last model.
  std::map<std::string, std::vector<std::byte>>* groupDataFiles = nullptr;
};

struct ModelFiles {
  std::vector<std::byte> model;                             // the serialized ONNX model
  std::map<std::string, std::vector<std::byte>> dataFiles;  // external-initializer files: path -> contents
  int epContextNodes = 0;
};

// The ctx model of `compiled` (node-name prefix already applied) for the encoded `binary`.
Result<ModelFiles> serializeCtxModel(const CompiledModel& compiled, const OutputLayout& layout, const EncodedBinary& binary);
// A model that has nothing compiled, serialized with the same initializer placement (the Compile API writes the
// optimized model when no node compiled).
Result<ModelFiles> serializePlainModel(const ir::Model& model, const OutputLayout& layout);

// `path` relative to `folder`, refused (INVALID_ARGUMENT naming `what`) when it leaves the folder.
Result<std::string> relativeInside(const std::string& path, const std::string& folder, const std::string& what);

}  // namespace kiln::epctx
