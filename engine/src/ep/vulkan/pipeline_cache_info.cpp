// kiln/pipeline_cache.h's inspection: the header as written, and the file judged by the same code that loads it.
#include <cstring>
#include <fstream>

#include "context_binary/format.h"
#include "ep/vulkan/pipeline_cache.h"
#include "kiln/pipeline_cache.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

namespace layout = vk::pipeline_cache_layout;

uint32_t u32At(std::span<const std::byte> bytes, size_t offset) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + offset, 4);
  return v;
}

uint64_t u64At(std::span<const std::byte> bytes, size_t offset) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, 8);
  return v;
}

}  // namespace

Result<std::string> kilnFileKind(const std::string& path) {
  // A folder is not "neither format"; a FIFO must not block the open; a missing file is left to the open's own message.
  if (Status regular = checkRegularFile(path); regular.code() == StatusCode::INVALID_ARGUMENT) return regular;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot open " + path);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == sizeof magic && std::memcmp(magic, ctxbin::kMagic, sizeof magic) == 0) return std::string("context_binary");
  if (in.gcount() == sizeof magic && std::memcmp(magic, layout::kMagic, sizeof magic) == 0) return std::string("pipeline_cache");
  return Status(StatusCode::INVALID_GRAPH, path + " is neither a Kiln context binary nor a Kiln pipeline cache file");
}

Result<PipelineCacheFileInfo> inspectPipelineCacheFile(const std::string& path, const std::string& deviceSelector) {
  KILN_ASSIGN_OR_RETURN(const std::string kind, kilnFileKind(path));
  if (kind != "pipeline_cache") return Status(StatusCode::INVALID_GRAPH, path + " is not a pipeline cache file");
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  const auto bytes = file->bytes();
  PipelineCacheFileInfo info;
  info.path = path;
  info.fileSize = bytes.size();
  if (bytes.size() >= layout::kHeaderBytes) {
    info.formatVersion = u32At(bytes, 8);
    char version[layout::kEngineVersionTextBytes + 1] = {};
    std::memcpy(version, bytes.data() + 48, layout::kEngineVersionTextBytes);
    info.engineVersion = version;
    info.vendorId = u32At(bytes, 20);
    info.deviceId = u32At(bytes, 24);
    info.driverId = u32At(bytes, 28);
    info.driverVersion = u32At(bytes, 32);
    vk::DeviceInfo described;
    described.apiVersion = u32At(bytes, 36);
    std::memcpy(described.pipelineCacheUuid.data(), bytes.data() + 96, 16);
    info.apiVersion = described.apiVersionString();
    info.pipelineCacheUuid = described.pipelineCacheUuidHex();
    info.spirvEntries = u32At(bytes, layout::kEntryCountOffset);
    info.spirvBytes = u64At(bytes, layout::kSpirvSizeOffset);
    info.driverBlobBytes = u64At(bytes, layout::kDriverBlobSizeOffset);
  }
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::selectDevice(deviceSelector, true));
  info.against = "device " + std::to_string(device.index) + " (" + device.name + ", " + device.driverInfo + ")";
  // The loader's own checks decide: the same strict header and integrity rules a session applies.
  auto cache = vk::PipelineCacheFile::fromBytes(path, bytes, device);
  info.reason = cache->missReason();
  info.usable = info.reason.empty();
  info.damaged = cache->corrupt();
  info.driverBlobReason = cache->driverBlobReason();
  return info;
}

}  // namespace kiln
