#include "context_binary/weights_section.h"

#include <algorithm>
#include <cstring>

#include "context_binary/format.h"

namespace kiln::ctxbin {
namespace {

Status corrupt(const std::string& why) { return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: " + why); }

constexpr uint32_t kMaxRank = 32;

bool knownType(int32_t type) { return type >= 1 && type <= 16; }

}  // namespace

void writeTensorType(const Tensor& tensor, ByteWriter& out) {
  out.i32(static_cast<int32_t>(tensor.dtype()));
  out.u32(static_cast<uint32_t>(tensor.rank()));
  for (int64_t d : tensor.shape()) out.i64(d);
}

Result<std::pair<DataType, Shape>> readTensorType(ByteReader& in) {
  const int32_t type = in.i32();
  const uint32_t rank = in.u32();
  if (!in.ok() || !knownType(type) || rank > kMaxRank) return corrupt("malformed tensor type");
  Shape shape(rank);
  uint64_t elements = 1;
  for (auto& d : shape) {
    d = in.i64();
    if (!in.ok() || d < 0) return corrupt("malformed tensor shape");
    if (d > 0 && elements > (uint64_t{1} << 48) / static_cast<uint64_t>(d)) return corrupt("tensor shape too large");
    elements *= static_cast<uint64_t>(d);
  }
  return std::make_pair(static_cast<DataType>(type), std::move(shape));
}

std::vector<std::byte> tensorBytes(const Tensor& tensor) {
  if (tensor.dtype() == DataType::STRING) {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(tensor.numel()));
    for (int64_t i = 0; i < tensor.numel(); ++i) w.str(tensor.strings()[i]);
    return w.take();
  }
  const auto* p = static_cast<const std::byte*>(tensor.rawData());
  return std::vector<std::byte>(p, p + tensor.byteSize());
}

Result<Tensor> tensorFromBytes(DataType type, const Shape& shape, std::span<const std::byte> bytes) {
  if (type == DataType::STRING) {
    ByteReader r(bytes);
    const uint32_t count = r.count(4);
    if (!r.ok() || count != static_cast<uint64_t>(shapeSize(shape))) return corrupt("string tensor count mismatch");
    std::vector<std::string> values(count);
    for (auto& v : values) v = r.str();
    if (!r.ok() || r.left() != 0) return corrupt("malformed string tensor");
    return Tensor::fromStrings(shape, std::move(values));
  }
  const uint64_t expected = static_cast<uint64_t>(shapeSize(shape)) * dataTypeSize(type);
  if (expected != bytes.size()) {
    return corrupt("tensor of " + shapeToString(shape) + " " + dataTypeName(type) + " needs " + std::to_string(expected) +
                   " bytes, has " + std::to_string(bytes.size()));
  }
  Tensor t(type, shape);
  if (!bytes.empty()) std::memcpy(t.rawData(), bytes.data(), bytes.size());
  return t;
}

const FileRange* WeightTableWriter::externalFor(const std::string& name, const Tensor& tensor) const {
  if (!external_ || tensor.dtype() == DataType::STRING || tensor.rawData() != nullptr) return nullptr;
  const auto it = external_->find(name);
  return it == external_->end() ? nullptr : &it->second;
}

Status WeightTableWriter::writeReference(const Tensor& tensor, ByteWriter& out) {
  if (tensor.dtype() != DataType::STRING && !tensor.rawData() && tensor.numel() > 0) {
    writeShapeOnly(tensor, out);  // nothing to store (read as type and shape only)
    return Status::ok();
  }
  writeTensorType(tensor, out);
  WeightSource source = WeightSource::inMemory(tensor);
  stats_.references++;
  stats_.referencedBytes += source.size();
  KILN_ASSIGN_OR_RETURN(const uint32_t blob, addBlob(std::move(source)));
  out.u32(blob);
  return Status::ok();
}

Status WeightTableWriter::writeReference(const Tensor& tensor, const FileRange& range, ByteWriter& out) {
  if (range.size != tensor.byteSize()) {
    return Status(StatusCode::INVALID_ARGUMENT, "external weight data in '" + range.path + "' has " +
                                                    std::to_string(range.size) + " bytes, its tensor needs " +
                                                    std::to_string(tensor.byteSize()));
  }
  writeTensorType(tensor, out);
  stats_.references++;
  stats_.referencedBytes += range.size;
  KILN_ASSIGN_OR_RETURN(const uint32_t blob, addBlob(WeightSource::fileRange(range.path, range.offset, range.size)));
  out.u32(blob);
  return Status::ok();
}

Status WeightTableWriter::writeConstant(const Tensor& tensor, ByteWriter& out) {
  if (!weightless() || tensor.dtype() == DataType::STRING || !tensor.rawData() || tensor.numel() == 0) {
    return writeReference(tensor, out);
  }
  const auto bytes = std::span(static_cast<const std::byte*>(tensor.rawData()), tensor.byteSize());
  if (find_(bytes, contentHash(bytes))) return writeReference(tensor, out);
  derived_++;
  writeShapeOnly(tensor, out);
  return Status::ok();
}

void WeightTableWriter::writeShapeOnly(const Tensor& tensor, ByteWriter& out) {
  writeTensorType(tensor, out);
  out.u32(kShapeOnly);
}

Result<uint32_t> WeightTableWriter::addBlob(WeightSource source) {
  KILN_ASSIGN_OR_RETURN(const uint64_t hash, source.hash());
  // Laid out as added: the table (count, then 24 bytes a blob) is sized only at the end, so offsets count from
  // the first blob's start here and encodeTable / stream add the table's aligned size.
  const uint64_t end = blobs_.empty() ? 0 : blobs_.back().offset + blobs_.back().source.size();
  const uint64_t next = (end + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
  const std::optional<std::span<const std::byte>> bytes = source.memoryBytes();
  if (weightless() && bytes && !bytes->empty()) {
    if (std::optional<WeightRef> ref = find_(*bytes, hash)) {
      const auto key = std::make_tuple(ref->source, ref->name, ref->transform);
      if (auto it = externalBlob_.find(key); it != externalBlob_.end()) return it->second;
      ref->blob = static_cast<uint32_t>(blobs_.size());
      ref->blobHash = hash;
      ref->blobBytes = bytes->size();
      stats_.blobs++;
      stats_.externalBytes += bytes->size();
      WeightSource empty;  // stored empty: the bytes come from the source at load
      KILN_ASSIGN_OR_RETURN(const uint64_t emptyHash, empty.hash());
      blobs_.push_back({std::move(empty), emptyHash, next});
      externalBlob_[key] = ref->blob;
      refs_.push_back(*ref);
      return ref->blob;
    }
  }
  auto it = std::lower_bound(byHash_.begin(), byHash_.end(), std::make_pair(hash, uint32_t{0}));
  for (; it != byHash_.end() && it->first == hash; ++it) {
    KILN_ASSIGN_OR_RETURN(const bool same, sameBytes(blobs_[it->second].source, source));
    if (same) return it->second;  // same content: share it
  }
  const auto index = static_cast<uint32_t>(blobs_.size());
  stats_.blobs++;
  stats_.storedBytes += source.size();
  blobs_.push_back({std::move(source), hash, next});
  byHash_.insert(it, {hash, index});
  return index;
}

namespace {

uint64_t alignUp(uint64_t offset) { return (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

}  // namespace

std::vector<std::byte> WeightTableWriter::encodeTable() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(blobs_.size()));
  const uint64_t base = alignUp(4 + 24 * blobs_.size());  // where the first blob starts
  for (const Blob& blob : blobs_) {
    w.u64(base + blob.offset);
    w.u64(blob.source.size());
    w.u64(blob.hash);
  }
  return w.take();
}

uint64_t WeightTableWriter::encodedSize() const {
  const uint64_t table = 4 + 24 * blobs_.size();
  return blobs_.empty() ? table : alignUp(table) + blobs_.back().offset + blobs_.back().source.size();
}

Status WeightTableWriter::stream(const ChunkSink& sink) const {
  static constexpr std::byte kZeros[kSectionAlignment] = {};
  const std::vector<std::byte> table = encodeTable();
  KILN_RETURN_IF_ERROR(sink(table));
  uint64_t at = table.size();
  const uint64_t base = alignUp(table.size());
  for (const Blob& blob : blobs_) {
    const uint64_t start = base + blob.offset;
    KILN_RETURN_IF_ERROR(sink(std::span(kZeros, static_cast<size_t>(start - at))));
    KILN_RETURN_IF_ERROR(blob.source.forEachChunk(sink));
    at = start + blob.source.size();
  }
  return Status::ok();
}

Result<WeightTableReader> WeightTableReader::parse(std::span<const std::byte> section, std::shared_ptr<const void> owner,
                                                  const ExternalBlobs* external) {
  WeightTableReader table;
  table.section_ = section;
  table.owner_ = std::move(owner);
  if (external) table.external_ = *external;
  ByteReader r(section);
  const uint32_t count = r.count(24);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t offset = r.u64(), size = r.u64(), hash = r.u64();
    if (!r.ok() || offset > section.size() || size > section.size() - offset) {
      return corrupt("weight blob " + std::to_string(i) + " lies outside the weights section");
    }
    auto blob = section.subspan(offset, size);
    if (contentHash(blob) != hash) return corrupt("weight blob " + std::to_string(i) + " content hash mismatch");
    table.blobs_.push_back(blob);
  }
  if (!r.ok()) return corrupt("weights table does not parse");
  return table;
}

uint64_t WeightTableReader::blobBytes() const {
  uint64_t total = 0;
  for (const auto& blob : blobs_) total += blob.size();
  return total;
}

Result<Tensor> WeightTableReader::readReference(ByteReader& in) const {
  KILN_ASSIGN_OR_RETURN(auto type, readTensorType(in));
  const uint32_t blob = in.u32();
  if (in.ok() && blob == kShapeOnly && type.first != DataType::STRING) {
    return Tensor::wrap(type.first, type.second, nullptr);
  }
  if (!in.ok() || blob >= blobs_.size()) return corrupt("weight reference to a blob that does not exist");
  if (auto it = external_.find(blob); it != external_.end() && type.first != DataType::STRING) {
    const Tensor& supplied = it->second;
    if (!supplied.defined()) return Tensor::wrap(type.first, type.second, nullptr);  // unresolved: type and shape
    const uint64_t expected = static_cast<uint64_t>(shapeSize(type.second)) * dataTypeSize(type.first);
    if (supplied.byteSize() != expected) {
      return corrupt("weight blob " + std::to_string(blob) + " from the source model has " +
                     std::to_string(supplied.byteSize()) + " bytes, the reference needs " + std::to_string(expected));
    }
    auto holder = std::make_shared<Tensor>(supplied);
    auto* data = static_cast<std::byte*>(holder->rawData());
    return Tensor::wrap(type.first, type.second, std::shared_ptr<std::byte>(holder, data));
  }
  const auto bytes = blobs_[blob];
  const size_t alignment = std::max<size_t>(dataTypeSize(type.first), 1);
  const bool aligned = reinterpret_cast<uintptr_t>(bytes.data()) % alignment == 0;
  if (type.first == DataType::STRING || !aligned || !owner_) return tensorFromBytes(type.first, type.second, bytes);
  const uint64_t expected = static_cast<uint64_t>(shapeSize(type.second)) * dataTypeSize(type.first);
  if (expected != bytes.size()) return tensorFromBytes(type.first, type.second, bytes);  // reports the mismatch
  // In place: the tensor keeps the mapping alive. Its storage is a private mapping, so writes never reach the file.
  auto* data = const_cast<std::byte*>(bytes.data());
  return Tensor::wrap(type.first, type.second, std::shared_ptr<std::byte>(owner_, data));
}

}  // namespace kiln::ctxbin
