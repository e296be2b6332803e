// What a compile targets beyond the model and its options, as the compile identity records it
// (epcontext/compile_record.h): each context-owning EP's compiler, and the device (a profile's content, or the live
// device's identity down to its driver and pipeline-cache UUID).
#pragma once

#include "epcontext/compile_record.h"
#include "kiln/session_options.h"

namespace kiln {

// The target a compile with `options` has. A live device that cannot be found is named "unavailable (<why>)": the
// compile itself reports that error.
Result<epctx::CompileTarget> compileTargetOf(const SessionOptions& options);

}  // namespace kiln
