// libFuzzer target for the tokenizer.json loader: any byte string goes through
// bpe_vocab_from_tokenizer_json and, when accepted, make_bpe_tokenizer. A tokenizer that loads encodes a
// few fixed strings and the input itself, with special parsing off and on, and the promises of
// tokenizer.h are checked: ids in range, decode(encode(s)) == utf8_lossy(s) (byte tokens and merges
// only ever concatenate bytes; a special token decodes to the text it matched), the streamed token
// bytes give the same text, and every error names the input. A broken promise traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void check_encode(const qc::Tokenizer& tok, std::string_view text, bool special) {
  const auto ids = tok.encode(text, special);
  if (!ids.ok()) return;  // a byte without a token: an error, never a crash
  for (const int32_t id : *ids) require(id >= 0 && id < tok.n_vocab());
  const std::string want = qc::utf8_lossy(text);
  require(tok.decode(*ids) == want);
  qc::Utf8Stream stream;
  std::string streamed;
  for (const int32_t id : *ids) streamed += stream.push(tok.token_bytes(id));
  streamed += stream.flush();
  require(streamed == want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto vocab = qc::bpe_vocab_from_tokenizer_json(input, "fuzz.json");
  if (!vocab.ok()) {
    require(vocab.error().message.rfind("fuzz.json: ", 0) == 0);  // every error names the input
    return 0;
  }
  require(!vocab->tokens.empty());
  require(vocab->token_types.size() == vocab->tokens.size());
  const auto tok = qc::make_bpe_tokenizer(*vocab);
  if (!tok.ok()) return 0;
  const qc::Tokenizer& t = **tok;
  require(t.n_vocab() == static_cast<int>(vocab->tokens.size()));
  require(t.token_bytes(-1).empty() && t.token_bytes(t.n_vocab()).empty());
  for (const std::string_view s :
       {std::string_view("Hello world, DON'T we'll  \n\n 123"),
        std::string_view("<|im_start|>user\n\xff<|im_end|>"),
        std::string_view("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"), input}) {
    check_encode(t, s, false);
    check_encode(t, s, true);
  }
  const qc::SpecialTokens& sp = t.special();
  for (const int32_t id : {sp.bos, sp.eos, sp.im_start, sp.im_end, sp.think_begin, sp.think_end, sp.pad}) {
    require(id >= -1 && id < t.n_vocab());
  }
  return 0;
}
