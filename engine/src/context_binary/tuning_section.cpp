#include "context_binary/tuning_section.h"

#include <bit>
#include <cmath>

#include "context_binary/byte_io.h"

namespace kiln::ctxbin {
namespace {

Status corrupt(const std::string& why) {
  return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: tuning section " + why);
}

}  // namespace

std::vector<std::byte> encodeTuningSection(const std::vector<CompiledPartition>& partitions, uint64_t* records) {
  ByteWriter w;
  uint32_t count = 0;
  for (const auto& p : partitions) count += p.tuning.requested ? 1 : 0;
  w.u32(count);
  for (const auto& p : partitions) {
    if (!p.tuning.requested) continue;
    w.str(p.name);
    w.str(p.tuning.note);
    w.u32(static_cast<uint32_t>(p.tuning.kernels.size()));
    for (const auto& k : p.tuning.kernels) {
      w.u32(static_cast<uint32_t>(k.node));
      w.str(k.label);
      w.str(k.chosen);
      w.u32(static_cast<uint32_t>(k.trials.size()));
      for (const auto& [candidate, ms] : k.trials) {
        w.str(candidate);
        w.u64(std::bit_cast<uint64_t>(ms));
      }
    }
  }
  if (records) *records = count;
  return w.take();
}

Result<std::map<std::string, PartitionTuning>> decodeTuningSection(std::span<const std::byte> bytes) {
  std::map<std::string, PartitionTuning> out;
  ByteReader r(bytes);
  const uint32_t records = r.count(12);
  for (uint32_t i = 0; i < records && r.ok(); ++i) {
    const std::string name = r.str();
    PartitionTuning tuning;
    tuning.requested = true;
    tuning.note = r.str();
    const uint32_t kernels = r.count(16);
    for (uint32_t k = 0; k < kernels && r.ok(); ++k) {
      TunedKernel kernel;
      kernel.node = r.u32();
      kernel.label = r.str();
      kernel.chosen = r.str();
      const uint32_t trials = r.count(12);
      for (uint32_t t = 0; t < trials && r.ok(); ++t) {
        std::string candidate = r.str();
        const double ms = std::bit_cast<double>(r.u64());
        if (r.ok() && !(std::isfinite(ms) && ms >= 0)) return corrupt("holds a time that is not a duration");
        kernel.trials.emplace_back(std::move(candidate), ms);
      }
      if (r.ok() && kernel.chosen.empty()) return corrupt("holds a choice with no candidate name");
      tuning.kernels.push_back(std::move(kernel));
    }
    if (r.ok() && !out.emplace(name, std::move(tuning)).second) return corrupt("names partition " + name + " twice");
  }
  if (!r.ok()) {
    return corrupt("does not parse (a count or length runs past its " + std::to_string(bytes.size()) + " bytes)");
  }
  if (r.left() != 0) return corrupt("has " + std::to_string(r.left()) + " bytes after its last record");
  return out;
}

}  // namespace kiln::ctxbin
