// The protobuf wire format, just enough to find attribute bytes without parsing the whole model. Field numbers
// from onnx.proto: ModelProto.graph = 7; GraphProto.node = 1; NodeProto.name = 3, op_type = 4, domain = 7,
// attribute = 5; AttributeProto.name = 1, s = 4, g = 6, graphs = 11.
#include "epcontext/payload_locator.h"

#include <optional>
#include <vector>

#include "epcontext/epcontext_names.h"

namespace kiln::epctx {
namespace {

constexpr uint64_t kModelGraph = 7, kGraphNode = 1, kNodeName = 3, kNodeOpType = 4, kNodeDomain = 7,
                   kNodeAttribute = 5, kAttributeName = 1, kAttributeString = 4, kAttributeGraph = 6,
                   kAttributeGraphs = 11;
constexpr int kMaxDepth = 64;  // deeper nesting than any real model: treated as malformed rather than recursed on

struct Span {
  const std::byte* begin = nullptr;
  const std::byte* end = nullptr;
  std::string text() const { return std::string(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin)); }
};

bool readVarint(const std::byte*& p, const std::byte* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const auto byte = static_cast<uint8_t>(*p++);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Calls visit(field, span) for every length-delimited field of `message` and skips the others. False when the
// message is malformed or `visit` returns false.
template <class Visit>
bool forEachLengthField(Span message, Visit&& visit) {
  const std::byte* p = message.begin;
  while (p < message.end) {
    uint64_t tag = 0;
    if (!readVarint(p, message.end, tag)) return false;
    switch (tag & 7) {
      case 0: {
        uint64_t ignored = 0;
        if (!readVarint(p, message.end, ignored)) return false;
        break;
      }
      case 1:
        if (message.end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (message.end - p < 4) return false;
        p += 4;
        break;
      case 2: {
        uint64_t length = 0;
        if (!readVarint(p, message.end, length) || length > static_cast<uint64_t>(message.end - p)) return false;
        const Span value{p, p + length};
        p += length;
        if (!visit(tag >> 3, value)) return false;
        break;
      }
      default:
        return false;  // groups (3, 4) are not used by onnx.proto
    }
  }
  return true;
}

class Walker {
 public:
  Walker(const std::byte* base, std::map<std::string, PayloadRange>& found) : base_(base), found_(found) {}

  bool graph(Span graph, int depth) {
    if (depth > kMaxDepth) return false;
    return forEachLengthField(graph, [&](uint64_t field, Span value) { return field != kGraphNode || node(value, depth); });
  }

 private:
  bool node(Span node, int depth) {
    std::string name, opType, domain;
    std::optional<Span> context;
    std::vector<Span> bodies;
    const bool ok = forEachLengthField(node, [&](uint64_t field, Span value) {
      if (field == kNodeName) name = value.text();
      if (field == kNodeOpType) opType = value.text();
      if (field == kNodeDomain) domain = value.text();
      if (field != kNodeAttribute) return true;
      std::string attributeName;
      std::optional<Span> s;
      const bool attributeOk = forEachLengthField(value, [&](uint64_t attributeField, Span attributeValue) {
        if (attributeField == kAttributeName) attributeName = attributeValue.text();
        if (attributeField == kAttributeString) s = attributeValue;
        if (attributeField == kAttributeGraph || attributeField == kAttributeGraphs) bodies.push_back(attributeValue);
        return true;
      });
      if (attributeName == kEpCacheContext && s) context = s;
      return attributeOk;
    });
    if (!ok) return false;
    if (opType == kOpType && domain == kDomain && context) {
      found_.emplace(name, PayloadRange{static_cast<uint64_t>(context->begin - base_),
                                        static_cast<uint64_t>(context->end - context->begin)});
    }
    for (const Span& body : bodies) {
      if (!graph(body, depth + 1)) return false;
    }
    return true;
  }

  const std::byte* base_;
  std::map<std::string, PayloadRange>& found_;
};

}  // namespace

Result<std::map<std::string, PayloadRange>> locateEpContextPayloads(std::span<const std::byte> model) {
  std::map<std::string, PayloadRange> found;
  Walker walker(model.data(), found);
  const Span message{model.data(), model.data() + model.size()};
  const bool ok = forEachLengthField(message, [&](uint64_t field, Span value) {
    return field != kModelGraph || walker.graph(value, 0);
  });
  if (!ok) return Status(StatusCode::INVALID_PROTOBUF, "the model is not a well-formed protobuf message");
  return found;
}

}  // namespace kiln::epctx
