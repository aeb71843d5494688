// Writing a SentencePiece vocabulary as GGUF tokenizer metadata (the byte-level BPE writer,
// write_bpe_vocab_metadata, is declared in bpe_trainer.h beside the trainer that feeds it). The readers are
// in tokenizer.h (defined in gguf_vocab.cpp); the writers are gguf_vocab_write.cpp, offline tooling; all key
// strings live in gguf_vocab_keys.h.
#pragma once

#include <string_view>

#include "tokenizer/tokenizer.h"

namespace qc {
namespace gguf {
class Writer;
}

// Writes tokenizer.ggml.{model=llama, tokens, scores, token_type, bos/eos/padding_token_id (when set),
// add_space_prefix, add_bos_token=false, add_eos_token=false} and tokenizer.chat_template (when not
// empty): what llama.cpp's converter writes for a SentencePiece model and spm_vocab_from_gguf reads back.
// `vocab.unigram` is not stored: a `llama` vocabulary is segmented by piece score (SentencePiece BPE).
void write_spm_vocab_metadata(gguf::Writer& writer, const SpmVocab& vocab, std::string_view chat_template);

}  // namespace qc
