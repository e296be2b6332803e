// What a binary viewer shows of a context binary beyond kiln/context_binary.h: each SPIR-V module with its words and
// the graphs that dispatch it, and for a binary that fails validation, what can still be read and which part failed
// (its byte range), so a viewer shows partial views instead of nothing.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/context_binary.h"
#include "kiln/status.h"

namespace kiln {

struct KILN_EXPORT ContextBinarySpirvModule {
  std::string key;                  // the shader variant key (shader|bindings|local size|defines)
  std::vector<uint32_t> words;      // the SPIR-V module
  std::vector<std::string> graphs;  // names of the compiled partitions whose kernels dispatch it
  std::vector<ContextBinaryNodeRef> nodes;  // the nodes that dispatch it (none recorded before format 1.2)
};

// Every SPIR-V module of a valid binary, in section order. Errors as inspectContextBinary.
KILN_EXPORT Result<std::vector<ContextBinarySpirvModule>> readContextBinarySpirv(std::span<const std::byte> bytes,
                                                                                 const std::string& origin);
// The same for the binary file at `path`, mapped rather than read (its weights are never copied).
KILN_EXPORT Result<std::vector<ContextBinarySpirvModule>> readContextBinarySpirv(const std::string& path);

// One section of a damaged binary and whether it holds up.
struct KILN_EXPORT ContextBinarySectionCheck {
  ContextBinarySection section;
  std::string problem;  // "" when intact (hash matches and its content decodes)
};

struct KILN_EXPORT ContextBinaryDiagnosis {
  std::string problem;      // the first failure as inspectContextBinary reports it; "" for a valid binary
  std::string failedPart;   // "header" (header or section table) or a section kind ("spirv", ...); "" when valid
  uint64_t failedOffset = 0, failedSize = 0;  // the failed part's byte range
  bool headerReadable = false;                // header, checksum and section table hold: `partial` has them
  ContextBinaryInfo partial;                  // header facts and sections (graphs, SPIR-V, weights left empty)
  std::vector<ContextBinarySectionCheck> sections;  // every section of the table, each with its own problem
};

// Where the binary in `bytes` fails, and what of it is readable. Never fails itself: an unreadable header is a
// diagnosis with failedPart "header" and nothing readable.
KILN_EXPORT ContextBinaryDiagnosis diagnoseContextBinary(std::span<const std::byte> bytes, const std::string& origin);

}  // namespace kiln
