#include "epcontext/ctx_outputs.h"

#include <filesystem>

#include "context_binary/context_binary.h"
#include "epcontext/binary_admission.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/epcontext_names.h"
#include "onnx/model_to_proto.h"
#include "onnx/model_writer.h"
#include "onnx/tensor_proto.h"

namespace kiln::epctx {
namespace {

namespace fs = std::filesystem;

constexpr size_t kExternalAlignment = 64;

void setExternal(onnx::TensorProto& proto, const Tensor& value, const std::string& location, int64_t offset, int64_t size) {
  proto.clear_dims();
  for (int64_t d : value.shape()) proto.add_dims(d);
  proto.set_data_type(static_cast<int32_t>(value.dtype()));
  proto.clear_raw_data();
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, std::string text) {
    auto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(std::move(text));
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(size));
}

// Places each initializer of the written model: embedded, appended to an external file, or left in the source's.
class InitializerPlacer {
 public:
  explicit InitializerPlacer(const OutputLayout& layout) : layout_(layout) {}

  Status place(const std::string& name, const Tensor& value, onnx::TensorProto& proto) {
    if (value.dtype() == DataType::STRING) {
      onnx_io::tensorToProto(value, proto);
      return Status::ok();
    }
    const ExternalInitializerInfo* original = nullptr;
    if (layout_.originals) {
      auto it = layout_.originals->find(name);
      // Only while the value is still the source's: an optimizer pass may have replaced it under the same name.
      if (it != layout_.originals->end() && static_cast<size_t>(it->second.size) == value.byteSize()) original = &it->second;
    }
    InitializerLocation where;
    if (layout_.locationFunc) {
      where = layout_.locationFunc(name, value, original);
    } else if (!layout_.externalInitializersFile.empty() && value.byteSize() >= layout_.externalThreshold) {
      where = InitializerLocation::inFile(layout_.externalInitializersFile);
    }
    switch (where.kind) {
      case InitializerLocation::Kind::EMBED: onnx_io::tensorToProto(value, proto); return Status::ok();
      case InitializerLocation::Kind::ORIGINAL: {
        if (!original) {
          return Status(StatusCode::INVALID_ARGUMENT, "initializer '" + name +
                                                          "' has no source external-data location to keep");
        }
        KILN_ASSIGN_OR_RETURN(const std::string location,
                              relativeInside(original->path, layout_.modelFolder, "external data of '" + name + "'"));
        setExternal(proto, value, location, original->offset, original->size);
        return Status::ok();
      }
      case InitializerLocation::Kind::FILE: {
        const fs::path file(where.file);
        bool escapes = where.file.empty() || file.is_absolute();
        for (const auto& part : file) escapes = escapes || part == "..";
        if (escapes) {
          return Status(StatusCode::INVALID_ARGUMENT, "external initializer file '" + where.file + "' of '" + name +
                                                          "' must be a relative path inside the output folder");
        }
        auto& files = layout_.groupDataFiles ? *layout_.groupDataFiles : layout_.dataFiles;
        std::vector<std::byte>& data = files[(fs::path(layout_.modelFolder) / file).lexically_normal().string()];
        data.resize((data.size() + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment);
        const size_t offset = data.size();
        const auto* bytes = static_cast<const std::byte*>(value.rawData());
        data.insert(data.end(), bytes, bytes + value.byteSize());
        setExternal(proto, value, file.lexically_normal().string(), static_cast<int64_t>(offset),
                    static_cast<int64_t>(value.byteSize()));
        return Status::ok();
      }
    }
    return Status::ok();
  }

  std::map<std::string, std::vector<std::byte>> takeFiles() { return std::move(layout_.dataFiles); }

 private:
  struct Layout : OutputLayout {
    explicit Layout(const OutputLayout& base) : OutputLayout(base) {}
    std::map<std::string, std::vector<std::byte>> dataFiles;
  } layout_;
};

Result<ModelFiles> serialize(const ir::Model& model, const OutputLayout& layout) {
  InitializerPlacer placer(layout);
  KILN_ASSIGN_OR_RETURN(
      const onnx::ModelProto proto,
      onnx_io::modelToProto(model, [&](const std::string& name, const Tensor& value, onnx::TensorProto& out) {
        return placer.place(name, value, out);
      }));
  ModelFiles files;
  KILN_ASSIGN_OR_RETURN(files.model, onnx_io::saveModelBuffer(proto));
  files.dataFiles = placer.takeFiles();
  return files;
}

}  // namespace

Result<std::string> relativeInside(const std::string& path, const std::string& folder, const std::string& what) {
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(folder.empty() ? "." : folder, ec), ec);
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const fs::path relative = target.lexically_relative(base);
  bool escapes = relative.empty() || relative.is_absolute();
  for (const auto& part : relative) escapes = escapes || part == "..";
  if (escapes) {
    return Status(StatusCode::INVALID_ARGUMENT, what + " '" + path + "' is outside the output model's folder '" +
                                                    base.string() + "' (a ctx model refers to files inside its folder)");
  }
  return relative.string();
}

Result<EncodedBinary> prepareBinary(std::vector<CompiledPartition> partitions, const ctxbin::ContextHooksLookup& providers,
                                    const BinaryExtras& extras) {
  KILN_ASSIGN_OR_RETURN(const ctxbin::EpContextHooks* hooks, ctxbin::exporterOf(partitions, providers));
  KILN_ASSIGN_OR_RETURN(ctxbin::BinaryContents contents, hooks->exportContext(std::move(partitions)));
  contents.compileRecord = extras.compileRecord;
  contents.externalWeights = extras.externalWeights;
  if (extras.weightless) {
    contents.findExternal = extras.weightless->finder;
    contents.weightSources = extras.weightless->sources;
  }
  EncodedBinary encoded;
  encoded.target = contents.target;
  KILN_ASSIGN_OR_RETURN(encoded.prepared, ctxbin::PreparedContextBinary::prepare(contents));
  return encoded;
}

Result<EncodedBinary> encodeBinary(std::vector<CompiledPartition> partitions, const ctxbin::ContextHooksLookup& providers,
                                   const BinaryExtras& extras) {
  KILN_ASSIGN_OR_RETURN(EncodedBinary encoded, prepareBinary(std::move(partitions), providers, extras));
  encoded.bytes.reserve(static_cast<size_t>(encoded.prepared->fileSize()));
  KILN_RETURN_IF_ERROR(encoded.prepared->stream([&](std::span<const std::byte> chunk) {
    encoded.bytes.insert(encoded.bytes.end(), chunk.begin(), chunk.end());
    return Status::ok();
  }));
  return encoded;
}

Status stageBinary(FileTransaction& files, const std::string& path, const EncodedBinary& binary) {
  return files.stage(path, [&](const ChunkWriter& write) { return binary.prepared->stream(write); });
}

Result<ModelFiles> serializeCtxModel(const CompiledModel& compiled, const OutputLayout& layout, const EncodedBinary& binary) {
  EpContextSettings settings;
  settings.embedMode = layout.embedMode;
  settings.sourceModelFilename = layout.sourceModelFilename;
  settings.compileRecord = layout.compileRecord;
  if (layout.embedMode == 0) {
    KILN_ASSIGN_OR_RETURN(settings.binaryReference, relativeInside(layout.binaryPath, layout.modelFolder, "context binary"));
  }
  KILN_ASSIGN_OR_RETURN(const ir::Model model, epContextModelFor(compiled, settings, binary.head(), binary.bytes, binary.target));
  KILN_ASSIGN_OR_RETURN(ModelFiles files, serialize(model, layout));
  files.epContextNodes = static_cast<int>(compiled.partitions.size());
  return files;
}

Result<ModelFiles> serializePlainModel(const ir::Model& model, const OutputLayout& layout) { return serialize(model, layout); }

}  // namespace kiln::epctx
