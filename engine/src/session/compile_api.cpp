// kiln/compiler.h: ONNX Runtime's Compile API over Kiln's session: compile, then write the EPContext model, its
// context binary and its external initializers as one transaction.
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "epcontext/compile_record.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/ctx_outputs.h"
#include "kiln/compiler.h"
#include "kiln/config_keys.h"
#include "kiln/version.h"
#include "onnx/model_writer.h"
#include "session/compile_reuse.h"
#include "session/compile_target.h"
#include "session/execution_providers.h"
#include "session/inference_session.h"
#include "session/session_config.h"
#include "util/file_io.h"
#include "util/file_lock.h"
#include "util/log.h"

namespace kiln {
namespace fs = std::filesystem;

ModelCompilationOptions::ModelCompilationOptions(SessionOptions sessionOptions) : session_(std::move(sessionOptions)) {}

ModelCompilationOptions& ModelCompilationOptions::setInputModelPath(std::string path) {
  inputPath_ = std::move(path);
  inputBuffer_.reset();
  ++inputsSet_;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setInputModelFromBuffer(std::span<const std::byte> bytes) {
  inputBuffer_ = bytes;
  inputPath_.clear();
  ++inputsSet_;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setOutputModelPath(std::string path) {
  outputPath_ = std::move(path);
  ++outputsSet_;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setOutputModelBuffer(std::vector<std::byte>* buffer) {
  outputBuffer_ = buffer;
  ++outputsSet_;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setContextDataWriteFunction(ContextDataWriteFunc write) {
  contextDataWrite_ = std::move(write);
  contextDataStream_ = nullptr;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setContextDataStreamFunction(ContextDataStreamFunc write) {
  contextDataStream_ = std::move(write);
  contextDataWrite_ = nullptr;
  return *this;
}

ModelCompilationOptions& ModelCompilationOptions::setOutputModelWriteFunc(OutputWriteFunc write) {
  outputWrite_ = std::move(write);
  ++outputsSet_;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setOutputModelExternalInitializersFile(std::string path,
                                                                                        size_t sizeThreshold) {
  externalInitializersFile_ = std::move(path);
  externalThreshold_ = sizeThreshold;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setOutputModelGetInitializerLocationFunc(InitializerLocationFunc func) {
  initializerLocation_ = std::move(func);
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setEpContextEmbedMode(bool embed) {
  embed_ = embed;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setFlags(CompileFlags flags) {
  flags_ = flags;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setEpContextBinaryInformation(std::string directory,
                                                                                std::string modelName) {
  binaryDirectory_ = std::move(directory);
  binaryModelName_ = std::move(modelName);
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setGraphOptimizationLevel(GraphOptimizationLevel level) {
  optimizationLevel_ = level;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setTargetProfile(std::string profilePath) {
  targetProfile_ = std::move(profilePath);
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setReuseUpToDateOutputs(bool reuse) {
  reuseUpToDate_ = reuse;
  return *this;
}
ModelCompilationOptions& ModelCompilationOptions::setNodeNamePrefix(std::string prefix) {
  prefix_ = std::move(prefix);
  return *this;
}

// The checked form of ModelCompilationOptions: where everything comes from and goes.
struct CompileRequest {
  const ModelCompilationOptions& options;
  ModelSource source;
  std::string outputPath;      // empty: buffer or callback
  std::string modelFolder;     // anchors the binary and external files
  std::string binaryBase;       // the path the binary's default name derives from (binaryPathFor)
  SessionOptions session;

  explicit CompileRequest(const ModelCompilationOptions& o) : options(o), outputPath(o.outputPath_), session(o.session_) {}

  static Result<CompileRequest> from(const ModelCompilationOptions& o) {
    CompileRequest r(o);
    if (o.inputsSet_ == 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "Input model to compile must be specified via a path or a buffer");
    }
    if (o.inputBuffer_) {
      if (o.inputBuffer_->empty()) return Status(StatusCode::INVALID_ARGUMENT, "Buffer for input model data has size 0");
      r.source.bytes = *o.inputBuffer_;
    } else {
      if (o.inputPath_.empty()) return Status(StatusCode::INVALID_ARGUMENT, "Invalid input model: path string is empty");
      std::error_code ec;
      if (!fs::exists(o.inputPath_, ec)) {
        return Status(StatusCode::INVALID_ARGUMENT, "Input model path does not exist: " + o.inputPath_);
      }
      KILN_RETURN_IF_ERROR(checkRegularFile(o.inputPath_));  // a folder or FIFO: the same answer as run's
      r.source.path = o.inputPath_;
    }
    if (o.outputsSet_ > 1) {
      return Status(StatusCode::INVALID_ARGUMENT, "give one output for the compiled model: a path, a buffer or a write function");
    }
    // An output that was set but is empty would otherwise fall through to the (unset) write function.
    if (o.outputsSet_ == 1 && o.outputPath_.empty() && !o.outputBuffer_ && !o.outputWrite_) {
      return Status(StatusCode::INVALID_ARGUMENT, "Invalid output model: the path is empty, or the buffer or write "
                                                  "function is null");
    }
    if (o.initializerLocation_ && !o.externalInitializersFile_.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT, "an external initializers file and an initializer location function "
                                                  "exclude each other");
    }
    if (o.outputsSet_ == 0) {
      if (r.source.path.empty()) {
        return Status(StatusCode::INVALID_ARGUMENT, "Unable to generate an output model path: require an input model path "
                                                    "if the location of the output model (e.g., file, buffer, or stream) "
                                                    "is not specified.");
      }
      r.outputPath = defaultCtxModelPath(r.source.path);
    }
    if (!r.outputPath.empty()) {
      if (namesFolder(r.outputPath)) {
        return Status(StatusCode::INVALID_ARGUMENT, "output model path '" + r.outputPath +
                                                        "' should not point to a folder: give a file such as model_ctx.onnx");
      }
      std::error_code ec;
      if (hasFlag(o.flags_, CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS) && fs::exists(r.outputPath, ec)) {
        return Status(StatusCode::FAIL, "Failed to generate EP context model since the file '" + r.outputPath +
                                            "' exists already. Please remove the EP context model if you want to "
                                            "re-generate it.");
      }
      r.modelFolder = fs::path(r.outputPath).parent_path().string();
      r.binaryBase = r.outputPath;
    } else if (!o.binaryDirectory_.empty() || !o.binaryModelName_.empty()) {
      if (o.binaryDirectory_.empty() || o.binaryModelName_.empty()) {
        return Status(StatusCode::INVALID_ARGUMENT, "output_dir or model_name is empty");
      }
      std::error_code ec;
      if (fs::exists(o.binaryDirectory_, ec) && !fs::is_directory(o.binaryDirectory_, ec)) {
        return Status(StatusCode::INVALID_ARGUMENT, "output_dir is not a valid directory.");
      }
      r.modelFolder = o.binaryDirectory_;
      r.binaryBase = (fs::path(o.binaryDirectory_) / o.binaryModelName_).string();
    } else if (!r.source.path.empty()) {
      r.modelFolder = fs::path(r.source.path).parent_path().string();
      r.binaryBase = r.source.path;
    } else if (!o.embed_) {
      return Status(StatusCode::INVALID_ARGUMENT, "the input and output models are in memory and embed mode is 0: "
                                                  "call setEpContextBinaryInformation(directory, modelName) so the "
                                                  "context binary has a place");
    }
    if (r.modelFolder.empty()) r.modelFolder = ".";
    // Compile settings go in as session config entries.
    for (const char* key : {config::kEpContextEnable, config::kShareEpContexts, config::kStopShareEpContexts}) {
      if (r.session.configEntry(key)) KILN_RETURN_IF_ERROR(r.session.addConfigEntry(key, "0"));
    }
    if (!r.session.configEntry(config::kExecutionProviders)) {
      KILN_RETURN_IF_ERROR(r.session.addConfigEntry(config::kExecutionProviders, config::defaultValue(config::kExecutionProviders)));
    }
    if (o.optimizationLevel_) {
      KILN_RETURN_IF_ERROR(r.session.addConfigEntry(config::kGraphOptimizationLevel,
                                                    graphOptimizationLevelName(*o.optimizationLevel_)));
    }
    if (!o.targetProfile_.empty()) {
      KILN_RETURN_IF_ERROR(r.session.addConfigEntry(config::kVulkanTargetProfile, o.targetProfile_));
    }
    return r;
  }

  std::string prefix() const {
    return options.prefix_.empty() ? session.configEntryOr(config::kEpContextNodeNamePrefix, "") : options.prefix_;
  }

  epctx::OutputLayout layout(const std::map<std::string, ExternalInitializerInfo>* originals) const {
    epctx::OutputLayout layout;
    layout.embedMode = options.embed_ ? 1 : 0;
    layout.modelFolder = modelFolder;
    layout.sourceModelFilename = source.path.empty() ? "" : fs::path(source.path).filename().string();
    layout.externalInitializersFile = options.externalInitializersFile_;
    layout.externalThreshold = options.externalThreshold_;
    layout.locationFunc = options.initializerLocation_;
    layout.originals = originals;
    return layout;
  }

  // The options a compile record stores: the session's result-changing ones and the output layout's (embed mode,
  // external initializers), which change the files written.
  std::map<std::string, std::string> recordedOptions() const {
    std::map<std::string, std::string> recorded = resultChangingOptions(session);
    recorded[config::kEpContextEmbedMode] = options.embed_ ? "1" : "0";
    recorded[config::kEpContextExternalInitializersFile] =
        options.externalInitializersFile_.empty()
            ? (options.initializerLocation_ ? "(location function)" : "")
            : options.externalInitializersFile_ + " from " + std::to_string(options.externalThreshold_) + " bytes";
    return recorded;
  }

  // Where the binary of `executionProvider`'s partitions goes: named after the EP (kiln/compile_outputs.h).
  std::string binaryPathFor(const std::string& executionProvider) const {
    return binaryBase.empty() ? std::string() : defaultContextBinaryPath(binaryBase, executionProvider);
  }

  // The source model as a file: its path, else ep.context_source_model_path for a model from memory ("" if none).
  std::string sourceFile() const {
    return source.path.empty() ? session.configEntryOr(config::kEpContextSourceModelPath, "") : source.path;
  }

  // The binary's format-1.1 extras: `record`, and the source weights' lookup when weightless output is asked for.
  Result<epctx::BinaryExtras> binaryExtras(const std::vector<std::string>& sources, std::string record) const {
    epctx::BinaryExtras extras;
    extras.compileRecord = std::move(record);
    if (weightlessRequested(session)) {
      KILN_ASSIGN_OR_RETURN(extras.weightless, epctx::weightlessSourcesFor(sources, modelFolder,
                                                                           session.configEntryOr(config::kVulkanFp16, "0") == "1"));
    }
    return extras;
  }

  // True when the context binary goes to a context-data write or stream function instead of a file.
  bool binaryGoesToWriteFunction() const { return options.contextDataWrite_ || options.contextDataStream_; }

  // The context binary goes to its file (staged, streamed into it) or, when set, to the context-data stream or
  // write function under the name the ctx model records for it (before any file is committed: a failing callback
  // leaves nothing behind). Only the whole-buffer write function makes the binary exist in memory whole.
  Status emitBinary(FileTransaction& files, const std::string& path, const epctx::EncodedBinary& binary,
                    CompileResult& result) const {
    const ctxbin::PreparedContextBinary& prepared = *binary.prepared;
    if (!binaryGoesToWriteFunction()) {
      result.binaryPath = path;
      return epctx::stageBinary(files, path, binary);
    }
    KILN_ASSIGN_OR_RETURN(const std::string name, epctx::relativeInside(path, modelFolder, "context binary"));
    const std::string what = std::string("the context-data ") + (options.contextDataStream_ ? "stream" : "write") +
                             " function for '" + name + "'";
    // The caller's code: an exception must not cross the API.
    auto guarded = [&](const std::function<Status()>& call) -> Status {
      try {
        return call().withContext(what);
      } catch (const std::exception& e) {
        return Status(StatusCode::FAIL, what + " threw: " + e.what());
      } catch (...) {
        return Status(StatusCode::FAIL, what + " threw");
      }
    };
    if (options.contextDataStream_) {
      KILN_RETURN_IF_ERROR(prepared.stream([&](std::span<const std::byte> chunk) {
        return guarded([&] { return options.contextDataStream_(name, chunk, false); });
      }));
      return guarded([&] { return options.contextDataStream_(name, {}, true); });
    }
    const std::vector<std::byte>* whole = &binary.bytes;
    std::vector<std::byte> collected;
    if (whole->empty()) {  // prepared only: the whole-buffer function needs it assembled
      collected.reserve(static_cast<size_t>(prepared.fileSize()));
      KILN_RETURN_IF_ERROR(prepared.stream([&](std::span<const std::byte> chunk) {
        collected.insert(collected.end(), chunk.begin(), chunk.end());
        return Status::ok();
      }));
      whole = &collected;
    }
    return guarded([&] { return options.contextDataWrite_(name, *whole); });
  }

  // The model goes to its file (staged), the caller's buffer or the write function.
  Status emitModel(FileTransaction& files, const epctx::ModelFiles& model, CompileResult& result) const {
    for (const auto& [path, bytes] : model.dataFiles) {
      KILN_RETURN_IF_ERROR(files.stage(path, bytes));
      result.externalInitializersPath = path;
    }
    if (!outputPath.empty()) {
      result.outputModelPath = outputPath;
      return files.stage(outputPath, model.model);
    }
    if (options.outputBuffer_) {
      *options.outputBuffer_ = model.model;
      return Status::ok();
    }
    constexpr size_t kChunk = 64 * 1024;  // ONNX Runtime's OutStreamBuf chunk
    for (size_t offset = 0; offset < model.model.size(); offset += kChunk) {
      const auto chunk = std::span(model.model).subspan(offset, std::min(kChunk, model.model.size() - offset));
      Status written;
      try {  // the caller's code: an exception must not cross the API (ONNX Runtime makes it FAIL too)
        written = options.outputWrite_(chunk);
      } catch (const std::exception& e) {
        written = Status(StatusCode::FAIL, std::string("Caught exception while calling the output write function: ") + e.what());
      } catch (...) {
        written = Status(StatusCode::FAIL, "Caught exception while calling the output write function");
      }
      KILN_RETURN_IF_ERROR(written);
    }
    return Status::ok();
  }
};

namespace {

// Files first staged, then the model emitted: a write callback only sees a model whose other files are ready.
Status finish(FileTransaction& files, CompileResult& result) {
  result.filesWritten = files.targets();
  return files.commit();
}

void reportWrite(const SessionOptions& options, int64_t done) { options.progress.report(ProgressStep::WRITE, done, 1); }

}  // namespace

namespace {

// The lock of a compile writing `outputPath` (util/file_lock.h); none when the output is not a file or no lock file
// can be made (the compile goes on unserialized).
std::optional<PathLock> lockOutput(const std::string& outputPath) {
  if (outputPath.empty()) return std::nullopt;
  auto lock = PathLock::acquire(outputPath);
  if (!lock.isOk()) {
    log::warn("compiling without a lock (a concurrent compile of the same output may run too): {}", lock.status().message());
    return std::nullopt;
  }
  return std::move(lock).value();
}

// The record a compile of `request` would write, for comparing with existing outputs (reading the source's bytes
// and external data to hash them).
Result<epctx::CompileRecord> expectedRecord(const CompileRequest& request, const epctx::CompileTarget& target) {
  KILN_ASSIGN_OR_RETURN(const std::string sourceHash, epctx::sourceContentHash(request.source.path));
  epctx::CompileRecord record;
  record.sourceHash = sourceHash;
  record.options = request.recordedOptions();
  record.kilnVersion = engineVersion();
  record.target = target;
  record.identity = epctx::compileIdentityOf(record);
  return record;
}

std::string identityIn(const std::string& encodedRecord) {
  const auto record = epctx::decodeCompileRecord(encodedRecord);
  return record ? record->identity : "";
}

}  // namespace

Result<CompileResult> compileModel(const ModelCompilationOptions& options) {
  KILN_ASSIGN_OR_RETURN(const CompileRequest request, CompileRequest::from(options));
  const std::optional<PathLock> lock = lockOutput(request.outputPath);
  // Once per compile: for a live device it starts the Vulkan driver to identify it (0.25 s on lavapipe).
  KILN_ASSIGN_OR_RETURN(const epctx::CompileTarget target, compileTargetOf(request.session));
  std::vector<std::string> recompileReasons;
  if (options.reuseUpToDateOutputs() && !request.outputPath.empty() && !request.source.path.empty()) {
    finishInterruptedCommits(request.outputPath);  // a writer killed between its renames: judge the finished state
    KILN_ASSIGN_OR_RETURN(const epctx::CompileRecord expected, expectedRecord(request, target));
    KILN_ASSIGN_OR_RETURN(const ExistingOutputs existing, judgeExistingOutputs(request.outputPath, expected));
    if (existing.reusable) {
      CompileResult reused;
      reused.outputModelPath = request.outputPath;
      reused.binaryPath = existing.binaryPath;
      reused.epContextNodes = existing.epContextNodes;
      reused.compileIdentity = existing.identity;
      reused.reused = true;
      for (const std::string& output : {reused.outputModelPath, reused.binaryPath}) {
        if (!output.empty()) removeTempsOfDeadWriters(output);  // what a write would have swept first
      }
      log::info("{} is up to date (compile identity {}): nothing compiled", request.outputPath, existing.identity);
      return reused;
    }
    recompileReasons = existing.reasons;
  }
  KILN_ASSIGN_OR_RETURN(CompilingSession compiling, createCompilingSession(request.source, request.session, true));
  CompileResult result;
  result.recompileReasons = std::move(recompileReasons);
  result.timings = compiling.session->timings();
  result.counters = compiling.session->counters();
  KILN_ASSIGN_OR_RETURN(CompiledModel compiled, compiledModelOf(*compiling.session));
  if (request.session.progress.cancelled()) return Status(StatusCode::CANCELLED, "compile cancelled");
  reportWrite(request.session, 0);
  FileTransaction files;
  epctx::OutputLayout layout = request.layout(&compiling.originals);
  layout.compileRecord = epctx::encodedCompileRecordFor(request.source, compiling.originals, request.recordedOptions(),
                                                        request.modelFolder, target);
  result.compileIdentity = identityIn(layout.compileRecord);
  if (compiled.partitions.empty()) {
    if (hasFlag(options.flags(), CompileFlags::ERROR_IF_NO_NODES_COMPILED)) {
      return Status(StatusCode::FAIL, "Unable to compile any nodes. Check that the session EPs support compilation "
                                      "and can execute at least one subgraph in the model.");
    }
    KILN_ASSIGN_OR_RETURN(const epctx::ModelFiles plain, epctx::serializePlainModel(compiled.model, layout));
    KILN_RETURN_IF_ERROR(request.emitModel(files, plain, result));
  } else {
    epctx::applyNodeNamePrefix(compiled, request.prefix());
    KILN_ASSIGN_OR_RETURN(epctx::BinaryExtras extras, request.binaryExtras({request.sourceFile()}, layout.compileRecord));
    for (const auto& [name, where] : compiling.originals) {  // the weights the compile left in their file
      extras.externalWeights[name] = {where.path, static_cast<uint64_t>(where.offset), static_cast<uint64_t>(where.size)};
    }
    // Embed mode 1 needs the binary's bytes in the model; otherwise it is only laid out here and streamed to its
    // destination by emitBinary (never whole in memory unless the whole-buffer write function asks for it).
    KILN_ASSIGN_OR_RETURN(const epctx::EncodedBinary binary,
                          options.embedMode() ? epctx::encodeBinary(compiled.partitions, allContextHooks(), extras)
                                              : epctx::prepareBinary(compiled.partitions, allContextHooks(), extras));
    layout.binaryPath = request.binaryPathFor(compiled.partitions.front().executionProvider);
    KILN_ASSIGN_OR_RETURN(const epctx::ModelFiles model, epctx::serializeCtxModel(compiled, layout, binary));
    if (!options.embedMode()) KILN_RETURN_IF_ERROR(request.emitBinary(files, layout.binaryPath, binary, result));
    result.epContextNodes = model.epContextNodes;
    if (request.session.progress.cancelled()) return Status(StatusCode::CANCELLED, "compile cancelled");
    KILN_RETURN_IF_ERROR(request.emitModel(files, model, result));
  }
  KILN_RETURN_IF_ERROR(finish(files, result));
  reportWrite(request.session, 1);
  return result;
}

Result<std::vector<CompileResult>> compileModelsSharingContext(const std::vector<std::string>& modelPaths,
                                                               const ModelCompilationOptions& common,
                                                               const std::vector<std::string>& prefixes,
                                                               const std::string& outputFolder) {
  if (modelPaths.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no models to compile");
  if (!prefixes.empty() && prefixes.size() != modelPaths.size()) {
    return Status(StatusCode::INVALID_ARGUMENT, "give one prefix per model (" + std::to_string(modelPaths.size()) +
                                                    " models, " + std::to_string(prefixes.size()) + " prefixes)");
  }
  struct Member {
    std::unique_ptr<ModelCompilationOptions> options;  // on the heap: `request` refers to it while members move
    CompileRequest request;
    CompilingSession compiling;
    CompiledModel compiled;
    CompileResult result;
  };
  std::vector<Member> members;
  std::vector<CompiledPartition> all;
  std::set<std::string> graphNames;
  std::string binaryPath;
  for (size_t i = 0; i < modelPaths.size(); ++i) {
    auto ownOptions = std::make_unique<ModelCompilationOptions>(common);
    ModelCompilationOptions& options = *ownOptions;
    options.setInputModelPath(modelPaths[i]);
    const std::string stem = fs::path(modelPaths[i]).stem().string();
    std::string output = defaultCtxModelPath(modelPaths[i]);
    if (!outputFolder.empty()) output = (fs::path(outputFolder) / fs::path(output).filename()).string();
    options.setOutputModelPath(output);
    options.setNodeNamePrefix(prefixes.empty() ? stem + "_" : prefixes[i]);
    if (options.embedMode()) {
      return Status(StatusCode::INVALID_ARGUMENT, "ep.context_embed_mode must be 0 if ep.share_ep_contexts is 1 "
                                                  "(the group's graphs share one binary file)");
    }
    KILN_ASSIGN_OR_RETURN(CompileRequest request, CompileRequest::from(options));
    request.session.progress.report("model " + std::to_string(i + 1) + "/" + std::to_string(modelPaths.size()), 0, 1);
    auto compiling = createCompilingSession(request.source, request.session);
    if (!compiling.isOk()) return compiling.status().withContext("compiling " + modelPaths[i]);
    KILN_ASSIGN_OR_RETURN(CompiledModel compiled, compiledModelOf(*compiling->session));
    if (compiled.partitions.empty()) {
      return Status(StatusCode::FAIL, "Unable to compile any nodes of " + modelPaths[i] + ": a sharing group needs "
                                      "every model to have a Vulkan partition");
    }
    if (binaryPath.empty()) binaryPath = request.binaryPathFor(compiled.partitions.front().executionProvider);
    epctx::applyNodeNamePrefix(compiled, request.prefix());
    for (const auto& partition : compiled.partitions) {
      if (!graphNames.insert(partition.name).second) {
        return Status(StatusCode::FAIL, "duplicate graph name '" + partition.name + "' in the sharing group: give each "
                                        "model its own prefix");
      }
      all.push_back(partition);
    }
    CompileResult result;
    result.timings = compiling->session->timings();
    result.counters = compiling->session->counters();
    result.binaryPath = binaryPath;
    result.epContextNodes = static_cast<int>(compiled.partitions.size());
    members.push_back({std::move(ownOptions), std::move(request), std::move(compiling).value(), std::move(compiled),
                       std::move(result)});
  }
  if (common.sessionOptions().progress.cancelled()) return Status(StatusCode::CANCELLED, "compile cancelled");
  // A group's binary carries no compile record (each member's ctx model has its own); weightless, it refers to every
  // member's source.
  std::vector<std::string> sources;
  for (const auto& member : members) sources.push_back(member.request.sourceFile());
  KILN_ASSIGN_OR_RETURN(const epctx::BinaryExtras extras, members.front().request.binaryExtras(sources, ""));
  KILN_ASSIGN_OR_RETURN(const epctx::EncodedBinary binary,
                        epctx::prepareBinary(std::move(all), allContextHooks(), extras));
  FileTransaction files;
  std::vector<CompileResult> results;
  std::map<std::string, std::vector<std::byte>> dataFiles;  // the members' external initializers share one file
  for (auto& member : members) {
    epctx::OutputLayout layout = member.request.layout(&member.compiling.originals);
    KILN_ASSIGN_OR_RETURN(const epctx::CompileTarget target, compileTargetOf(member.request.session));
    layout.compileRecord = epctx::encodedCompileRecordFor(member.request.source, member.compiling.originals,
                                                          member.request.recordedOptions(),
                                                          member.request.modelFolder, target);
    layout.binaryPath = binaryPath;
    layout.groupDataFiles = &dataFiles;
    std::map<std::string, size_t> before;
    for (const auto& [path, bytes] : dataFiles) before[path] = bytes.size();
    KILN_ASSIGN_OR_RETURN(const epctx::ModelFiles model, epctx::serializeCtxModel(member.compiled, layout, binary));
    for (const auto& [path, bytes] : dataFiles) {
      if (!before.count(path) || before[path] != bytes.size()) member.result.externalInitializersPath = path;
    }
    KILN_RETURN_IF_ERROR(member.request.emitModel(files, model, member.result));
    results.push_back(std::move(member.result));
  }
  for (const auto& [path, bytes] : dataFiles) KILN_RETURN_IF_ERROR(files.stage(path, bytes));
  KILN_RETURN_IF_ERROR(members.front().request.emitBinary(files, binaryPath, binary, results.front()));
  if (members.front().request.binaryGoesToWriteFunction()) {
    for (auto& result : results) result.binaryPath.clear();  // no file: the write function has the bytes
  }
  const std::vector<std::string> written = files.targets();
  KILN_RETURN_IF_ERROR(files.commit());
  for (auto& result : results) result.filesWritten = written;
  return results;
}

}  // namespace kiln
