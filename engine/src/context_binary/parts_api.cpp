// kiln/context_binary_parts.h over the format's internals.
#include <algorithm>

#include "context_binary/context_binary.h"
#include "context_binary/graphs_section.h"
#include "device/device_profile.h"
#include "kiln/context_binary_parts.h"

namespace kiln {

namespace {

Result<std::vector<ContextBinarySpirvModule>> spirvOf(const ctxbin::ContextBinary& binary) {
  KILN_ASSIGN_OR_RETURN(auto modules, binary.spirvModules());
  KILN_ASSIGN_OR_RETURN(auto partitions, binary.partitions());
  std::vector<ContextBinarySpirvModule> result;
  for (auto& [key, words] : modules) {
    ContextBinarySpirvModule module{key, std::move(words), {}, {}};
    for (const auto& p : partitions) {
      if (p.spirv.count(key)) module.graphs.push_back(p.name);
    }
    module.nodes = ctxbin::pipelineNodes(partitions, key);
    result.push_back(std::move(module));
  }
  return result;
}

}  // namespace

Result<std::vector<ContextBinarySpirvModule>> readContextBinarySpirv(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::open(path));
  return spirvOf(*binary);
}

Result<std::vector<ContextBinarySpirvModule>> readContextBinarySpirv(std::span<const std::byte> bytes,
                                                                     const std::string& origin) {
  KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
  return spirvOf(*binary);
}

namespace {

// Whether `status` (of partitions()) is the pipeline_users section's failure: it does not match the graphs.
bool blamesPipelineUsers(const Status& status) {
  return status.message().find("pipeline_users section") != std::string::npos;
}

// The problem of a section of `kind` whose hash matched: its content must decode (the graphs section needs the others).
std::string decodeProblem(const ctxbin::ContextBinary& binary, ctxbin::SectionKind kind) {
  Status status;
  const bool tablesDecode = binary.spirvModules().isOk() && binary.weights().isOk();
  switch (kind) {
    case ctxbin::SectionKind::SPIRV:
    case ctxbin::SectionKind::SPIRV_DIGESTS: status = binary.spirvModules().status(); break;
    case ctxbin::SectionKind::WEIGHTS: status = binary.weights().status(); break;
    case ctxbin::SectionKind::GRAPHS:
      // The graphs section decodes against the SPIR-V and weights sections: their failure is theirs, not its.
      if (tablesDecode) status = binary.partitions().status();
      if (blamesPipelineUsers(status)) status = Status::ok();
      break;
    case ctxbin::SectionKind::PIPELINE_USERS:
      status = binary.pipelineUsers().status();
      if (status.isOk() && tablesDecode) {
        const Status attached = binary.partitions().status();
        if (blamesPipelineUsers(attached)) status = attached;
      }
      break;
    default: break;
  }
  return status.isOk() ? std::string() : status.message();
}

}  // namespace

ContextBinaryDiagnosis diagnoseContextBinary(std::span<const std::byte> bytes, const std::string& origin) {
  ContextBinaryDiagnosis d;
  d.partial.path = origin;
  d.partial.fileSize = bytes.size();
  auto fail = [&](std::string part, uint64_t offset, uint64_t size, std::string why) {
    if (!d.problem.empty()) return;
    d.failedPart = std::move(part);
    d.failedOffset = offset;
    d.failedSize = size;
    d.problem = std::move(why);
  };
  auto structure = ctxbin::parseHeaderStructure(bytes);
  if (!structure.isOk()) {
    fail("header", 0, std::min<uint64_t>(bytes.size(), ctxbin::kHeaderBytes), structure.status().message());
    return d;
  }
  d.headerReadable = true;
  const auto& sections = structure.value().sections;
  vk::DeviceInfo target;
  for (const auto& s : sections) {
    if (s.kind != ctxbin::SectionKind::DEVICE) continue;
    const auto device = bytes.subspan(s.offset, s.size);
    auto parsed = vk::parseDeviceProfile(std::string_view(reinterpret_cast<const char*>(device.data()), device.size()),
                                         origin + " device section");
    if (parsed.isOk()) target = std::move(parsed).value();
  }
  ctxbin::describeHeaderFacts(structure.value().header, target, sections, d.partial);
  for (size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    ContextBinarySectionCheck check{d.partial.sections[i], {}};
    if (ctxbin::contentHash(bytes.subspan(s.offset, s.size)) != s.hash) {
      check.problem = "content hash mismatch: the bytes in [" + std::to_string(s.offset) + ", +" + std::to_string(s.size) +
                      ") are not what was written";
    }
    d.sections.push_back(std::move(check));
  }
  // With every hash intact, a section can still fail to decode: open the binary and decode each.
  const bool hashesHold = std::all_of(d.sections.begin(), d.sections.end(), [](const auto& c) { return c.problem.empty(); });
  if (hashesHold) {
    auto binary = ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin);
    for (size_t i = 0; i < sections.size(); ++i) {
      if (!binary.isOk()) {
        if (sections[i].kind == ctxbin::SectionKind::DEVICE) d.sections[i].problem = binary.status().message();
        continue;
      }
      d.sections[i].problem = decodeProblem(*binary.value(), sections[i].kind);
    }
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    if (d.sections[i].problem.empty()) continue;
    fail(d.sections[i].section.kind, sections[i].offset, sections[i].size,
         "corrupt context binary: " + d.sections[i].section.kind + " section: " + d.sections[i].problem);
  }
  return d;
}

}  // namespace kiln
