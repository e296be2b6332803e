#include "context_binary/provider_data_section.h"

#include <algorithm>
#include <set>

#include "context_binary/byte_io.h"

namespace kiln::ctxbin {
namespace {

Status corrupt(const std::string& why) {
  return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: provider-data section " + why);
}

}  // namespace

std::vector<std::byte> encodeProviderDataSection(const std::vector<CompiledPartition>& partitions, uint64_t* records) {
  ByteWriter w;
  uint32_t count = 0;
  for (const auto& p : partitions) count += p.providerData.empty() ? 0 : 1;
  w.u32(count);
  for (const auto& p : partitions) {
    if (p.providerData.empty()) continue;
    w.str(p.name);
    w.str(p.executionProvider);
    w.u64(p.providerData.size());
    w.bytes(p.providerData.data(), p.providerData.size());
  }
  if (records) *records = count;
  return w.take();
}

Status attachProviderData(std::span<const std::byte> bytes, std::vector<CompiledPartition>& partitions) {
  ByteReader r(bytes);
  const uint32_t records = r.count(16);
  std::set<std::string> seen;
  for (uint32_t i = 0; i < records && r.ok(); ++i) {
    const std::string name = r.str();
    const std::string provider = r.str();
    const uint64_t size = r.u64();
    if (size > r.left()) r.fail();
    const auto data = r.bytes(r.ok() ? static_cast<size_t>(size) : 0);
    if (!r.ok()) break;
    if (!seen.insert(name).second) return corrupt("names partition '" + name + "' twice");
    auto owner = std::find_if(partitions.begin(), partitions.end(), [&](const auto& p) { return p.name == name; });
    if (owner == partitions.end()) return corrupt("names partition '" + name + "', which the binary does not hold");
    if (owner->executionProvider != provider) {
      return corrupt("holds data of " + provider + " for partition '" + name + "', which " + owner->executionProvider +
                     " compiled");
    }
    owner->providerData.assign(data.begin(), data.end());
  }
  if (!r.ok()) {
    return corrupt("does not parse (a count or length runs past its " + std::to_string(bytes.size()) + " bytes)");
  }
  if (r.left() != 0) return corrupt("has " + std::to_string(r.left()) + " bytes after its last record");
  return Status::ok();
}

}  // namespace kiln::ctxbin
