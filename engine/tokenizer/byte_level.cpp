#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace qc::byte_level {
namespace {

constexpr bool printable(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

// The 68 non-printable bytes in increasing order; code 0x100 + n maps back to kShifted[n].
constexpr std::array<uint8_t, 68> shifted_bytes() {
  std::array<uint8_t, 68> a{};
  size_t n = 0;
  for (int b = 0; b < 256; ++b) {
    if (!printable(b)) a[n++] = static_cast<uint8_t>(b);
  }
  return a;
}
constexpr std::array<uint8_t, 68> kShifted = shifted_bytes();

constexpr std::array<uint16_t, 256> byte_codes() {
  std::array<uint16_t, 256> a{};
  uint16_t n = 0;
  for (int b = 0; b < 256; ++b)
    a[static_cast<size_t>(b)] = printable(b) ? static_cast<uint16_t>(b) : 0x100 + n++;
  return a;
}
constexpr std::array<uint16_t, 256> kCodes = byte_codes();

}  // namespace

uint32_t byte_to_code(uint8_t byte) {
  return kCodes[byte];
}

int code_to_byte(uint32_t code) {
  if (code < 0x100) return printable(static_cast<int>(code)) ? static_cast<int>(code) : -1;
  if (code < 0x100 + kShifted.size()) return kShifted[code - 0x100];
  return -1;
}

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) utf8::append(&out, kCodes[static_cast<uint8_t>(c)]);
  return out;
}

bool decode(std::string_view mapped, std::string* out) {
  out->clear();
  for (size_t i = 0; i < mapped.size();) {
    const utf8::Char c = utf8::next(mapped, i);
    if (c.scan != utf8::Scan::kValid) return false;
    const int b = code_to_byte(c.code);
    if (b < 0) return false;
    out->push_back(static_cast<char>(b));
    i += c.length;
  }
  return true;
}

}  // namespace qc::byte_level
