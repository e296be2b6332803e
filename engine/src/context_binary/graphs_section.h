// The graphs section: one record per compiled partition (name, EP, inputs, outputs, opsets, the nodes after
// device fusions with their attributes and stored decisions, value types, initializers and prepacked constants as
// weight references, and the SPIR-V modules its kernels dispatch, by index into the SPIR-V section).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "context_binary/weights_section.h"
#include "ep/execution_provider.h"

namespace kiln::ctxbin {

// The SPIR-V section: count u32, then per module key (string), word count u32, words.
class SpirvTableWriter {
 public:
  uint32_t add(const std::string& key, const std::vector<uint32_t>& words);  // deduplicated by key
  std::vector<std::byte> encode() const;
  // The SPIRV_DIGESTS section (format 1.3): count u32, then per module (in encode()'s order) its spirvDigest u64.
  std::vector<std::byte> encodeDigests() const;
  const std::vector<std::pair<std::string, std::vector<uint32_t>>>& modules() const { return modules_; }

 private:
  std::vector<std::pair<std::string, std::vector<uint32_t>>> modules_;
  std::map<std::string, uint32_t> index_;
};
Result<std::vector<std::pair<std::string, std::vector<uint32_t>>>> decodeSpirvSection(std::span<const std::byte> section);
// A module's digest: XXH3-64 of its words seeded with XXH3-64 of its variant key, so that the words are bound to the
// key they are stored under. A binary whose sections were resealed after its SPIR-V changed (a buggy writer or a
// tampered file) passes the section hashes but not this.
uint64_t spirvDigest(const std::string& key, std::span<const uint32_t> words);
// INVALID_GRAPH naming the first module of `modules` whose digest in `digests` (a SPIRV_DIGESTS section) differs,
// or when the section does not list one digest per module.
Status checkSpirvDigests(const std::vector<std::pair<std::string, std::vector<uint32_t>>>& modules,
                         std::span<const std::byte> digests);

// Encodes `partitions`; weights and SPIR-V go to the tables. INVALID_ARGUMENT when a partition holds something
// the format cannot store (a subgraph attribute: nodes that own bodies never reach a compiled partition).
Result<std::vector<std::byte>> encodeGraphs(const std::vector<CompiledPartition>& partitions, WeightTableWriter& weights,
                                            SpirvTableWriter& spirv);
// Decodes every partition record. INVALID_GRAPH with the reason on anything malformed.
Result<std::vector<CompiledPartition>> decodeGraphs(
    std::span<const std::byte> section, const WeightTableReader& weights,
    const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv);

// The execution provider named by the first partition record of a graphs section (one binary holds one EP's
// partitions), read without decoding anything else. INVALID_GRAPH when the section holds no readable record.
Result<std::string> firstPartitionProvider(std::span<const std::byte> section);

}  // namespace kiln::ctxbin
