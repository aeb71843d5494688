// Bounds-checked little-endian reader over a byte range. Every read first checks that the bytes are there
// and returns false (without moving) when they are not, so a parser built on it cannot read outside the
// image whatever the lengths in the file say. The caller turns a false into an error that names the field.
#pragma once

#include <cstdint>

namespace qc::gguf {

class Cursor {
 public:
  Cursor(const uint8_t* base, uint64_t size) : base_(base), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  bool has(uint64_t n) const { return n <= left(); }

  bool u8(uint8_t* v) {
    if (!has(1)) return false;
    *v = base_[pos_++];
    return true;
  }
  bool u16(uint16_t* v) { return le(v, 2); }
  bool u32(uint32_t* v) { return le(v, 4); }
  bool u64(uint64_t* v) { return le(v, 8); }
  // An unsigned little-endian integer of n = 1..8 bytes.
  bool uint(unsigned n, uint64_t* v) { return le(v, n); }

  // Points `*p` at the next n bytes and moves past them.
  bool bytes(uint64_t n, const uint8_t** p) {
    if (!has(n)) return false;
    *p = base_ + pos_;
    pos_ += n;
    return true;
  }

 private:
  // Assembles the value byte by byte: independent of the host's byte order and of alignment.
  template <class T>
  bool le(T* v, unsigned n) {
    if (!has(n)) return false;
    T x = 0;
    for (unsigned i = 0; i < n; ++i) x |= static_cast<T>(static_cast<T>(base_[pos_ + i]) << (8 * i));
    pos_ += n;
    *v = x;
    return true;
  }

  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace qc::gguf
