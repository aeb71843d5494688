// SentencePiece ModelProto <-> SpmVocab in protobuf wire format, written by hand because Debian's
// libsentencepiece-dev ships no sentencepiece_model.pb.h. Field numbers (checked against a model written
// by spm_train 0.1.97):
//   ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
//   SentencePiece   1 piece (string), 2 score (float), 3 type (enum, default NORMAL = 1)
//   TrainerSpec     3 model_type (1 UNIGRAM, 2 BPE), 4 vocab_size, 35 byte_fallback, 40 unk_id,
//                   41 bos_id, 42 eos_id, 43 pad_id, 45..48 unk/bos/eos/pad piece
//   NormalizerSpec  1 name, 2 precompiled_charsmap, 3 add_dummy_prefix (default true),
//                   4 remove_extra_whitespaces (default true), 5 escape_whitespaces (default true)
#pragma once

#include <string>
#include <string_view>

#include "qwenchat/result.h"
#include "tokenizer/tokenizer.h"

namespace qc {

// The proto for `v`: identity normalizer (no character map), byte fallback on when a BYTE piece exists.
std::string build_spm_model_proto(const SpmVocab& v);

// Reads pieces, scores, types, model type, the special ids and the normalizer's whitespace flags.
// `normalizer_name` receives the normalizer's name ("identity", "nmt_nfkc", ...) when not null.
Result<SpmVocab> parse_spm_model_proto(std::string_view bytes, const std::string& source,
                                       std::string* normalizer_name = nullptr);

}  // namespace qc
