#include "qwenchat/stats.h"

#include <bit>
#include <cstdio>

namespace qc {

std::string logits_hash(std::span<const float> row) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (const float v : row) {
    const auto bits = std::bit_cast<uint32_t>(v);
    for (int b = 0; b < 4; ++b) {  // little-endian byte order, whatever the host's
      h ^= (bits >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ull;  // FNV-1a 64 prime
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace qc
