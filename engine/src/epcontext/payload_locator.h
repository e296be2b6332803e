// Where each embedded EPContext payload lies in a serialized ONNX model: the bytes of the ep_cache_context
// attribute, found by walking the protobuf wire format (no copy of a multi-MB payload), so a hex view can read
// them in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "kiln/status.h"

namespace kiln::epctx {

struct PayloadRange {
  uint64_t offset = 0;  // of the payload's first byte in the model bytes
  uint64_t size = 0;
};

// The ep_cache_context range of every EPContext node (main graph and bodies, by node name; the first node of a
// name wins). INVALID_PROTOBUF when the bytes are not a well-formed protobuf message.
Result<std::map<std::string, PayloadRange>> locateEpContextPayloads(std::span<const std::byte> model);

}  // namespace kiln::epctx
