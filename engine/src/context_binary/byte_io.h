// Little-endian encoding for the context binary: a growing writer, and a reader over untrusted bytes that checks
// every read against the bytes left (a failed read latches, so decoders check once at the end of a record).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace kiln::ctxbin {

static_assert(std::endian::native == std::endian::little, "the context binary is written on little-endian hosts");

class ByteWriter {
 public:
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void u8(uint8_t v) { bytes(&v, 1); }
  void u16(uint16_t v) { bytes(&v, 2); }
  void u32(uint32_t v) { bytes(&v, 4); }
  void u64(uint64_t v) { bytes(&v, 8); }
  void i32(int32_t v) { bytes(&v, 4); }
  void i64(int64_t v) { bytes(&v, 8); }
  void f32(float v) { bytes(&v, 4); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  // Zero bytes up to a multiple of `alignment`.
  void align(size_t alignment) { out_.resize((out_.size() + alignment - 1) / alignment * alignment); }
  // Overwrites 8 bytes at `offset` (for fields known only after later data is written).
  void patchU64(size_t offset, uint64_t v) { std::memcpy(out_.data() + offset, &v, 8); }

  size_t size() const { return out_.size(); }
  const std::vector<std::byte>& data() const { return out_; }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}

  bool ok() const { return ok_; }
  size_t offset() const { return offset_; }
  size_t left() const { return ok_ ? in_.size() - offset_ : 0; }

  // The next `size` bytes (empty and failed when fewer are left).
  std::span<const std::byte> bytes(size_t size) {
    if (!ok_ || size > in_.size() - offset_) {
      ok_ = false;
      return {};
    }
    auto view = in_.subspan(offset_, size);
    offset_ += size;
    return view;
  }
  uint8_t u8() { return scalar<uint8_t>(); }
  uint16_t u16() { return scalar<uint16_t>(); }
  uint32_t u32() { return scalar<uint32_t>(); }
  uint64_t u64() { return scalar<uint64_t>(); }
  int32_t i32() { return scalar<int32_t>(); }
  int64_t i64() { return scalar<int64_t>(); }
  float f32() { return scalar<float>(); }
  std::string str() {
    const uint32_t size = u32();
    auto view = bytes(size);
    return ok_ ? std::string(reinterpret_cast<const char*>(view.data()), view.size()) : std::string();
  }
  // A count of items that each take at least `minItemBytes`: a count the bytes left cannot hold fails here, so
  // a hostile count never drives a huge allocation.
  uint32_t count(size_t minItemBytes) {
    const uint32_t n = u32();
    if (ok_ && minItemBytes > 0 && n > left() / minItemBytes) ok_ = false;
    return ok_ ? n : 0;
  }
  void fail() { ok_ = false; }

 private:
  template <class T>
  T scalar() {
    T v{};
    auto view = bytes(sizeof(T));
    if (ok_) std::memcpy(&v, view.data(), sizeof(T));
    return v;
  }

  std::span<const std::byte> in_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace kiln::ctxbin
