// Mutation testing of context binaries, shared by the engine tests (a binary compiled on the live device) and the
// sanitizer target (a synthetic binary, no Vulkan): every header and section-table byte flipped, sampled bytes
// of every section flipped, truncation at many offsets, section sizes and offsets set to huge values (with a
// valid checksum, so the bounds checks answer), and damage inside sections with hashes fixed up (so the
// decoders' own checks answer, including counts and lengths set to huge values). Opening must fail with
// INVALID_GRAPH where the damage is detectable and never crash anywhere.
#pragma once

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "context_binary/format.h"

namespace kiln::testing {

namespace mutation_detail {

// Fixes every section hash and the header checksum after an edit inside a section.
inline void rehash(std::vector<std::byte>& bytes) {
  uint32_t count = 0;
  std::memcpy(&count, bytes.data() + ctxbin::kSectionCountOffset, 4);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t entry = ctxbin::kHeaderBytes + i * ctxbin::kSectionEntryBytes;
    uint64_t offset = 0, size = 0;
    std::memcpy(&offset, bytes.data() + entry + 8, 8);
    std::memcpy(&size, bytes.data() + entry + 16, 8);
    const uint64_t hash = ctxbin::contentHash(std::span<const std::byte>(bytes).subspan(offset, size));
    std::memcpy(bytes.data() + entry + 24, &hash, 8);
  }
  const size_t tableEnd = ctxbin::kHeaderBytes + count * ctxbin::kSectionEntryBytes;
  std::memset(bytes.data() + ctxbin::kHeaderBytes - 8, 0, 8);
  const uint64_t checksum = ctxbin::contentHash(std::span<const std::byte>(bytes).first(tableEnd));
  std::memcpy(bytes.data() + ctxbin::kHeaderBytes - 8, &checksum, 8);
}

}  // namespace mutation_detail

// Runs every mutation of `original` (a valid binary); `fail` receives a description of each wrong outcome.
// Returns the number of mutated files tried.
inline size_t mutateContextBinary(const std::vector<std::byte>& original, const std::function<void(const std::string&)>& fail) {
  size_t cases = 0;
  auto rejected = [&](const std::vector<std::byte>& bytes, const std::string& what) {
    ++cases;
    auto binary = ctxbin::ContextBinary::fromBytes(bytes, what);
    if (binary.isOk()) {
      fail(what + " was accepted");
    } else if (binary.status().code() != StatusCode::INVALID_GRAPH) {
      fail(what + ": " + binary.status().toString());
    }
  };
  // Decoding must end in OK or INVALID_GRAPH, never a crash: a flipped weight bit can leave a valid file.
  auto decoded = [&](const std::vector<std::byte>& bytes, const std::string& what) {
    ++cases;
    auto binary = ctxbin::ContextBinary::fromBytes(bytes, what);
    if (!binary.isOk()) {
      if (binary.status().code() != StatusCode::INVALID_GRAPH) fail(what + ": " + binary.status().toString());
      return;
    }
    auto partitions = binary.value()->partitions();
    if (!partitions.isOk() && partitions.status().code() != StatusCode::INVALID_GRAPH) {
      fail(what + ": " + partitions.status().toString());
    }
  };

  auto parsed = ctxbin::parseHeader(original);
  if (!parsed.isOk()) {
    fail("the original does not parse: " + parsed.status().toString());
    return cases;
  }
  const size_t tableEnd = ctxbin::kHeaderBytes + parsed->sections.size() * ctxbin::kSectionEntryBytes;
  for (size_t i = 0; i < tableEnd; ++i) {
    auto bytes = original;
    bytes[i] ^= std::byte{0x5a};
    rejected(bytes, "header byte " + std::to_string(i) + " flipped");
  }
  std::mt19937 random(42);
  for (const auto& s : parsed->sections) {
    for (int k = 0; k < 64 && s.size > 0; ++k) {
      auto bytes = original;
      bytes[s.offset + random() % s.size] ^= std::byte{0x01};
      rejected(bytes, std::string(ctxbin::sectionKindName(s.kind)) + " byte flipped");
    }
  }
  for (size_t length = 0; length < original.size(); length += length < tableEnd + 64 ? 1 : 97) {
    rejected(std::vector<std::byte>(original.begin(), original.begin() + static_cast<ptrdiff_t>(length)),
             "truncated to " + std::to_string(length));
  }
  for (size_t i = 0; i < parsed->sections.size(); ++i) {
    for (uint64_t huge : {~uint64_t{0}, uint64_t{1} << 63, uint64_t(original.size()) + 64}) {
      for (bool offset : {false, true}) {
        auto sections = parsed->sections;
        (offset ? sections[i].offset : sections[i].size) = offset ? huge & ~uint64_t{63} : huge;
        auto bytes = original;
        const auto head = ctxbin::encodeHeader(parsed->header, sections);
        std::memcpy(bytes.data(), head.data(), head.size());
        rejected(bytes, std::string("huge section ") + (offset ? "offset" : "size"));
      }
    }
  }
  for (const auto& s : parsed->sections) {
    if (s.kind == ctxbin::SectionKind::DEVICE) continue;  // JSON: the profile parser's tests cover it
    for (int k = 0; k < 300 && s.size >= 4; ++k) {
      auto bytes = original;
      const size_t at = s.offset + random() % (s.size - 3);
      if (k % 3 == 0) {
        const uint32_t huge = k % 2 ? 0xffffffffu : 0x7fffffffu;
        std::memcpy(bytes.data() + at, &huge, 4);
      } else {
        bytes[at] ^= std::byte{static_cast<unsigned char>(1u << (k % 8))};
      }
      mutation_detail::rehash(bytes);
      decoded(bytes, std::string(ctxbin::sectionKindName(s.kind)) + " damaged with hashes fixed");
    }
  }
  return cases;
}

}  // namespace kiln::testing
