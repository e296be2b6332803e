#include "context_binary/weight_refs_section.h"

#include "context_binary/byte_io.h"

namespace kiln::ctxbin {

const char* weightTransformName(WeightTransform transform) {
  switch (transform) {
    case WeightTransform::NONE: return "none";
    case WeightTransform::FLOAT16: return "float16";
    case WeightTransform::BN_FOLD_WEIGHT: return "bn_fold_weight";
    case WeightTransform::BN_FOLD_BIAS: return "bn_fold_bias";
    case WeightTransform::BN_FOLD_WEIGHT_FLOAT16: return "bn_fold_weight_float16";
    case WeightTransform::BN_FOLD_BIAS_FLOAT16: return "bn_fold_bias_float16";
  }
  return "unknown";
}

std::vector<std::byte> encodeWeightRefs(const WeightRefs& refs) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(refs.sources.size()));
  for (const auto& source : refs.sources) {
    w.str(source.relativePath);
    w.str(source.absolutePath);
  }
  w.u32(static_cast<uint32_t>(refs.refs.size()));
  for (const auto& ref : refs.refs) {
    w.u32(ref.blob);
    w.u32(ref.source);
    w.str(ref.name);
    w.u8(static_cast<uint8_t>(ref.transform));
    w.u64(ref.sourceHash);
    w.u64(ref.sourceBytes);
    w.u64(ref.blobHash);
    w.u64(ref.blobBytes);
  }
  w.u64(refs.derivedConstants);
  return w.take();
}

Result<WeightRefs> decodeWeightRefs(std::span<const std::byte> section) {
  auto corrupt = [](const std::string& why) {
    return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: weight references " + why);
  };
  ByteReader r(section);
  WeightRefs refs;
  refs.sources.resize(r.count(8));
  for (auto& source : refs.sources) {
    source.relativePath = r.str();
    source.absolutePath = r.str();
  }
  refs.refs.resize(r.count(45));
  for (auto& ref : refs.refs) {
    ref.blob = r.u32();
    ref.source = r.u32();
    ref.name = r.str();
    const uint8_t transform = r.u8();
    ref.sourceHash = r.u64();
    ref.sourceBytes = r.u64();
    ref.blobHash = r.u64();
    ref.blobBytes = r.u64();
    if (!r.ok()) break;
    if (transform > static_cast<uint8_t>(WeightTransform::BN_FOLD_BIAS_FLOAT16)) return corrupt("name an unknown transform");
    ref.transform = static_cast<WeightTransform>(transform);
    if (ref.source >= refs.sources.size()) return corrupt("name a source model that does not exist");
  }
  refs.derivedConstants = r.u64();
  if (!r.ok() || r.left() != 0) return corrupt("do not parse");
  return refs;
}

}  // namespace kiln::ctxbin
