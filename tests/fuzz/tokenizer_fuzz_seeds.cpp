// Writes the seed corpora of the tokenizer fuzzers: small valid tokenizer.json files (both pre-tokenizer
// regexes, merges as strings and as pairs, special and non-special added tokens, NFC normalizer,
// ignore_merges, a vocabulary missing byte tokens) into argv[1], and small SentencePiece models (BPE with
// byte fallback, unigram, no dummy prefix) into argv[3]; argv[2] and argv[4] are created as the working
// corpus folders. Generated at test time so no binary file is committed; each seed stays under ~4 KiB
// (libFuzzer derives its default maximum input length from the largest seed).
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"

namespace {

using nlohmann::json;

bool write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "%s: cannot write\n", path.c_str());
  return static_cast<bool>(out);
}

struct JsonSeed {
  const char* pre;
  bool all_bytes;
  bool merge_pairs;
  bool nfc;
  bool ignore_merges;
};

std::string tokenizer_json(const JsonSeed& s) {
  using qc::byte_level::encode;
  json vocab = json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) {
    const bool ascii_word = (b >= 'a' && b <= 'z') || b == ' ' || b == '\'' || b == '\n';
    if (s.all_bytes || ascii_word) vocab[encode(std::string(1, static_cast<char>(b)))] = id++;
  }
  const std::vector<std::pair<std::string, std::string>> merges = {{" ", "t"}, {"h", "e"},   {" t", "he"},
                                                                   {"l", "l"}, {"'", "ll"},  {"\n", "\n"},
                                                                   {"o", "u"}, {" y", "ou"}, {" ", "y"}};
  json m = json::array();
  for (const auto& [a, b] : merges) {
    const std::string ea = encode(a), eb = encode(b);
    if (!vocab.contains(ea + eb)) vocab[ea + eb] = id++;
    if (s.merge_pairs) {
      m.push_back(json::array({ea, eb}));
    } else {
      m.push_back(ea + " " + eb);
    }
  }
  json added = json::array();
  for (const auto& [text, special] : std::vector<std::pair<std::string, bool>>{
           {"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true}, {"<think>", false}}) {
    added.push_back({{"id", id++},
                     {"content", text},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", !special},
                     {"special", special}});
  }
  const json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  json j = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", s.nfc ? json{{"type", "NFC"}} : json()},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers", json::array({{{"type", "Split"},
                                        {"pattern", {{"Regex", std::string(qc::pretokenizer_regex(s.pre))}}},
                                        {"behavior", "Isolated"},
                                        {"invert", false}},
                                       byte_level})}}},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"ignore_merges", s.ignore_merges},
        {"vocab", vocab},
        {"merges", m}}}};
  return j.dump();
}

qc::SpmVocab spm_vocab(bool unigram, bool add_space_prefix) {
  qc::SpmVocab v;
  v.unigram = unigram;
  v.add_space_prefix = add_space_prefix;
  const auto add = [&](std::string piece, float score, qc::TokenType type) {
    v.pieces.push_back(std::move(piece));
    v.scores.push_back(score);
    v.types.push_back(static_cast<int32_t>(type));
  };
  add("<unk>", 0, qc::TokenType::kUnknown);
  add("<s>", 0, qc::TokenType::kControl);
  add("</s>", 0, qc::TokenType::kControl);
  add("<think>", 0, qc::TokenType::kUserDefined);
  char hex[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    add(hex, 0, qc::TokenType::kByte);
  }
  float score = -1;
  for (const char* p : {"\xE2\x96\x81", "\xE2\x96\x81h", "e", "l", "lo", "\xE2\x96\x81hello", "h", "o", "w",
                        "r", "d", "\xE2\x96\x81w", "or", "ld", "\xE2\x96\x81world"}) {
    add(p, score, qc::TokenType::kNormal);
    score -= 0.5f;
  }
  v.bos = 1;
  v.eos = 2;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s JSON_SEEDS JSON_CORPUS SPM_SEEDS SPM_CORPUS\n", argv[0]);
    return 2;
  }
  for (int i = 1; i <= 4; ++i) ::mkdir(argv[i], 0755);
  const std::string json_dir = argv[1], spm_dir = argv[3];
  bool ok = write(json_dir + "/qwen35.json", tokenizer_json({"qwen35", true, false, false, false})) &&
            write(json_dir + "/qwen2_pairs_nfc.json", tokenizer_json({"qwen2", true, true, true, true})) &&
            write(json_dir + "/missing_bytes.json", tokenizer_json({"qwen35", false, true, false, false}));
  ok = ok && write(spm_dir + "/bpe.model", qc::build_spm_model_proto(spm_vocab(false, true))) &&
       write(spm_dir + "/unigram.model", qc::build_spm_model_proto(spm_vocab(true, true))) &&
       write(spm_dir + "/no_prefix.model", qc::build_spm_model_proto(spm_vocab(false, false)));
  return ok ? 0 : 1;
}
