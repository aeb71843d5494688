#include "tokenizer/tokenizer.h"

namespace qc {

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (const int32_t id : ids) out += token_bytes(id);
  return out;
}

}  // namespace qc
