// kiln compile's no-op: a compile whose outputs already exist whole, written by a compile of the same identity
// (epcontext/compile_record.h: source content, result-changing options, Kiln, compiler, target device), is not
// run again. What "whole" means: the ctx model reads, every EPContext node's binary is there, passes its integrity
// checks and is the one the ctx model recorded.
#pragma once

#include <string>
#include <vector>

#include "epcontext/compile_record.h"
#include "kiln/status.h"

namespace kiln {

struct ExistingOutputs {
  bool reusable = false;
  std::vector<std::string> reasons;  // why not (no output yet, unreadable, another identity, a damaged binary)
  std::string identity;              // the recorded compile identity ("" without a record)
  std::string binaryPath;            // the first binary a node references ("" when embedded or none)
  int epContextNodes = 0;
};

// Judges the ctx model at `outputPath` against `expected`, the record the compile about to run would write
// (compileIdentityOf(expected) is compared; on a mismatch the reasons say which part changed).
Result<ExistingOutputs> judgeExistingOutputs(const std::string& outputPath, const epctx::CompileRecord& expected);

}  // namespace kiln
