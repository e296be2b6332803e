#include "binary_output.h"

#include <cstdio>

namespace kiln::cli {
namespace {

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text.empty() ? "-" : text;
}

// "812 B", "14.2 KiB", "3.75 MiB".
std::string sizeText(uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < (1u << 20)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return text;
}

}  // namespace

void printText(const ContextBinaryInfo& info) {
  std::printf("%s: Kiln context binary, format %s, %llu bytes\n", info.path.c_str(), info.formatVersion.c_str(),
              static_cast<unsigned long long>(info.fileSize));
  std::printf("  written by engine %s, readable by %s\n", info.producerEngineVersion.c_str(),
              info.readableEngineVersions.c_str());
  std::printf("  compiled for %s: %s\n", info.target == "profile" ? "device profile" : "device", info.deviceName.c_str());
  std::printf("    vendor 0x%04x device 0x%04x, Vulkan %s, driver %s (id %u, version 0x%x): %s\n", info.vendorId,
              info.deviceId, info.apiVersion.c_str(), info.driverName.empty() ? "-" : info.driverName.c_str(),
              info.driverId, info.driverVersion, info.driverInfo.empty() ? "-" : info.driverInfo.c_str());
  std::printf("    pipeline cache UUID %s\n", info.pipelineCacheUuid.c_str());
  std::printf("  requires: features %s; subgroup size %u; workgroups up to %u invocations; %u bytes of push constants\n",
              joined(info.requiredFeatures).c_str(), info.subgroupSize, info.requiredWorkgroupInvocations,
              info.requiredPushConstantBytes);
  std::printf("  sections:\n");
  for (const auto& s : info.sections) {
    std::printf("    %-13s offset %10llu  size %10llu  items %5llu  xxh3 %s\n", s.kind.c_str(),
                static_cast<unsigned long long>(s.offset), static_cast<unsigned long long>(s.size),
                static_cast<unsigned long long>(s.items), s.hash.c_str());
  }
  std::printf("  graphs: %zu\n", info.graphs.size());
  for (const auto& g : info.graphs) {
    std::printf("    %s (%s): %lld nodes (%lld on the host), %lld initializers, %lld prepacked constants, %lld SPIR-V modules\n",
                g.name.c_str(), g.executionProvider.c_str(), static_cast<long long>(g.nodes),
                static_cast<long long>(g.hostNodes), static_cast<long long>(g.initializers),
                static_cast<long long>(g.prepackedConstants), static_cast<long long>(g.spirvModules));
    std::printf("      inputs  %s\n      outputs %s\n      ops     %s\n", joined(g.inputs).c_str(), joined(g.outputs).c_str(),
                joined(g.opTypes, " ").c_str());
    if (g.providerDataBytes > 0) {
      std::printf("      %s data: %s\n", g.executionProvider.c_str(), sizeText(static_cast<uint64_t>(g.providerDataBytes)).c_str());
      for (const auto& [label, value] : g.providerDetails) std::printf("        %-12s %s\n", (label + ":").c_str(), value.c_str());
    }
    if (!g.tuningNote.empty()) std::printf("      autotune: defaults kept: %s\n", g.tuningNote.c_str());
    if (!g.tuning.empty()) std::printf("      autotune: %zu choices stored\n", g.tuning.size());
    for (const auto& k : g.tuning) {
      std::string others;
      for (const auto& [name, ms] : k.candidates) {
        char trial[96];
        std::snprintf(trial, sizeof trial, "%s%s %.3f ms", others.empty() ? "" : ", ", name.c_str(), ms);
        others += trial;
      }
      std::printf("        %-40s %-12s %9.3f ms  (%s)\n", k.node.c_str(), k.chosen.c_str(), k.chosenMs, others.c_str());
    }
  }
  std::printf("  SPIR-V: %zu modules, %llu bytes\n", info.spirvModules.size(), static_cast<unsigned long long>(info.spirvBytes));
  if (!info.pipelines.empty() && !info.pipelineUsersRecorded) std::printf("    note: %s\n", app::kNoPipelineUsersNote);
  for (const auto& p : info.pipelines) {
    std::vector<std::string> users;
    for (const auto& n : p.nodes) users.push_back(n.graph + "/" + (n.node.empty() ? "#" + std::to_string(n.nodeIndex) : n.node));
    std::printf("    %-60s %10s  used by %s\n", p.key.c_str(), sizeText(p.bytes).c_str(),
                info.pipelineUsersRecorded ? joined(users).c_str() : joined(p.graphs).c_str());
  }
  std::printf("  autotune: %s\n", info.autotune == "tuned"    ? "choices stored (a session runs them with no tuning)"
                                 : info.autotune == "defaults" ? "requested, no choice stored (kernels use defaults)"
                                                               : "off (kernels use defaults)");
  std::printf("  driver pipeline cache: %s\n",
              info.driverCacheBytes ? (std::to_string(info.driverCacheBytes) + " bytes").c_str() : "none");
  std::printf("  weights: %llu blobs, %s stored for %llu references (%s); deduplication saved %s\n",
              static_cast<unsigned long long>(info.weightBlobs), sizeText(info.weightBytes).c_str(),
              static_cast<unsigned long long>(info.weightReferences), sizeText(info.weightBytesReferenced).c_str(),
              sizeText(info.weightBytesReferenced - info.weightBytes).c_str());
  if (info.weightless) {
    std::printf("  weightless: %llu weights (%s) come from the source model %s at load; %llu prepacked constants are "
                "derived again there\n",
                static_cast<unsigned long long>(info.externalWeights), sizeText(info.externalWeightBytes).c_str(),
                joined(info.weightSources).c_str(), static_cast<unsigned long long>(info.derivedConstants));
    for (const auto& ref : info.weightRefs) {
      std::printf("    %-40s %-24s %10s  from %s\n", ref.name.c_str(), ref.transform.c_str(), sizeText(ref.bytes).c_str(),
                  ref.source.c_str());
    }
  }
}

void printText(const CompatibilityVerdict& verdict) {
  std::printf("verdict: %s (against %s)\n", compatibilityName(verdict.compatibility), verdict.against.c_str());
  for (const auto& reason : verdict.reasons) std::printf("  - %s\n", reason.c_str());
}

}  // namespace kiln::cli
