// GPT-2 byte-level mapping: every byte 0..255 gets a printable code point so that byte strings can be
// stored as text in a vocabulary. Printable Latin-1 bytes (0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF) map to
// themselves; the other 68 bytes map, in increasing order, to U+0100..U+0143 (space 0x20 -> U+0120 "Ġ",
// newline 0x0A -> U+010A "Ċ").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qc::byte_level {

uint32_t byte_to_code(uint8_t byte);
int code_to_byte(uint32_t code);  // -1 when `code` is not in the mapping

// Bytes -> mapped UTF-8 text.
std::string encode(std::string_view bytes);
// Mapped UTF-8 text -> bytes. False (with `out` unspecified) when a character is not in the mapping or
// the text is not valid UTF-8.
bool decode(std::string_view mapped, std::string* out);

}  // namespace qc::byte_level
