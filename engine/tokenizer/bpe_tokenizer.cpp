// Byte-level BPE (GPT-2 / Qwen): special-token split, regex pre-tokenizer, byte->unicode mapping, then
// ranked merges inside each pre-token.
#include <functional>
#include <queue>
#include <unordered_map>

#include "tokenizer/byte_level.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace qc {
namespace {

struct MergeInfo {
  int32_t rank;
  int32_t id;  // the merged token
};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

bool special_type(TokenType t) {
  return t == TokenType::kControl || t == TokenType::kUserDefined;
}

class BpeTokenizer final : public Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> create(const BpeVocab& v);

  Result<std::vector<int32_t>> encode(std::string_view text, bool parse_special) const override;
  std::string token_bytes(int32_t id) const override {
    return in_range(id) ? bytes_[static_cast<size_t>(id)] : std::string();
  }
  int n_vocab() const override { return static_cast<int>(bytes_.size()); }
  const SpecialTokens& special() const override { return special_; }
  bool is_control(int32_t id) const override { return token_type(id) == TokenType::kControl; }
  TokenType token_type(int32_t id) const override {
    return in_range(id) ? types_[static_cast<size_t>(id)] : TokenType::kUnused;
  }
  int32_t special_id(std::string_view text) const override { return specials_.find(text); }
  std::string kind() const override { return "bpe/" + pre_->name(); }

 private:
  bool in_range(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < bytes_.size(); }
  Status bpe(std::string_view word, std::vector<int32_t>* out) const;

  std::vector<std::string> bytes_;  // token_bytes per id
  std::vector<TokenType> types_;
  std::unordered_map<std::string, int32_t> index_;  // mapped text of non-special tokens -> id
  std::unordered_map<uint64_t, MergeInfo> merges_;  // (left id, right id) -> rank, merged id
  std::array<int32_t, 256> byte_token_{};           // byte -> its one-character token, -1 if none
  SpecialMatcher specials_;
  std::unique_ptr<PreTokenizer> pre_;
  Normalizer norm_;  // applied to the text between special tokens, before pre_
  SpecialTokens special_;
  bool ignore_merges_ = false;
};

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::create(const BpeVocab& v) {
  auto t = std::make_unique<BpeTokenizer>();
  const size_t n = v.tokens.size();
  if (n == 0 || n > static_cast<size_t>(INT32_MAX)) {
    return make_error("BPE vocabulary: expected 1 to 2^31-1 tokens, got " + std::to_string(n));
  }
  if (!v.token_types.empty() && v.token_types.size() != n) {
    return make_error("BPE vocabulary: " + std::to_string(v.token_types.size()) + " token types for " +
                      std::to_string(n) + " tokens");
  }
  QC_ASSIGN(t->pre_, PreTokenizer::create(v.pre));
  QC_ASSIGN(t->norm_, Normalizer::from_json(v.normalizer, "BPE vocabulary"));
  t->ignore_merges_ = v.ignore_merges;
  for (const auto& [what, id] : {std::pair{"bos", v.bos}, {"eos", v.eos}, {"pad", v.pad}, {"eot", v.eot}}) {
    if (id < -1 || id >= static_cast<int64_t>(n)) {
      return make_error(std::string("BPE vocabulary: ") + what + " token id " + std::to_string(id) +
                        " is outside the vocabulary of " + std::to_string(n));
    }
  }

  t->types_.resize(n, TokenType::kNormal);
  t->bytes_.resize(n);
  for (size_t id = 0; id < n; ++id) {
    const std::string& text = v.tokens[id];
    if (!v.token_types.empty()) {
      const int32_t ty = v.token_types[id];
      if (ty < 1 || ty > 6) {
        return make_error("BPE vocabulary: token " + std::to_string(id) + " (\"" + text +
                          "\"): expected a token type 1..6, got " + std::to_string(ty));
      }
      t->types_[id] = static_cast<TokenType>(ty);
    }
    const auto i32 = static_cast<int32_t>(id);
    if (special_type(t->types_[id])) {
      t->bytes_[id] = text;  // stored as plain text
      t->specials_.add(text, i32);
      continue;
    }
    // A text that is not in the byte-level alphabet (hand-made vocabularies, [PAD] fillers) decodes as
    // itself; llama.cpp would throw here.
    if (!byte_level::decode(text, &t->bytes_[id])) t->bytes_[id] = text;
    t->index_.emplace(text, i32);  // the first id wins for a repeated text
  }
  t->specials_.finish();

  for (int b = 0; b < 256; ++b) {
    const auto it = t->index_.find(byte_level::encode(std::string(1, static_cast<char>(b))));
    t->byte_token_[static_cast<size_t>(b)] = it == t->index_.end() ? -1 : it->second;
  }

  t->merges_.reserve(v.merges.size());
  for (size_t r = 0; r < v.merges.size(); ++r) {
    const std::string& m = v.merges[r];
    // Split at the first space after the first character: a mapped token never holds a space.
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos) {
      return make_error("BPE merge " + std::to_string(r) + " (\"" + m + "\"): expected \"left right\"");
    }
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    const auto l = t->index_.find(left), rr = t->index_.find(right), merged = t->index_.find(left + right);
    if (l == t->index_.end() || rr == t->index_.end() || merged == t->index_.end()) {
      const std::string missing = l == t->index_.end() ? left : rr == t->index_.end() ? right : left + right;
      return make_error("BPE merge " + std::to_string(r) + " (\"" + m + "\"): \"" + missing +
                        "\" is not a token of the vocabulary");
    }
    t->merges_.emplace(pair_key(l->second, rr->second), MergeInfo{static_cast<int32_t>(r), merged->second});
  }
  t->special_ = resolve_special_tokens(t->specials_, v.bos, v.eos, v.pad, v.eot);
  return std::unique_ptr<Tokenizer>(std::move(t));
}

Result<std::vector<int32_t>> BpeTokenizer::encode(std::string_view input, bool parse_special) const {
  std::string lossy;
  std::vector<SpecialMatcher::Piece> pieces;
  specials_.split_for_encode(input, parse_special, &lossy, &pieces);
  std::vector<int32_t> out;
  std::vector<std::string_view> words;
  for (const SpecialMatcher::Piece& p : pieces) {
    if (p.id >= 0) {
      out.push_back(p.id);
      continue;
    }
    words.clear();
    std::string normalized;
    std::string_view text = p.text;
    if (!norm_.empty()) {
      normalized = norm_.apply(p.text);
      text = normalized;
    }
    QC_TRY(pre_->split(text, &words));
    for (const std::string_view w : words) QC_TRY(bpe(w, &out));
  }
  return out;
}

// Merges the lowest-ranked adjacent pair first, the leftmost among equal ranks (the order of Hugging Face's
// Word::merge_all and llama.cpp). Symbols form a linked list over the word's bytes and candidate pairs sit
// in a min-heap: O(n log n) per word of n bytes, so a pathological megabyte-long pre-token costs
// milliseconds, not a quadratic rescan; no length cap is needed.
Status BpeTokenizer::bpe(std::string_view word, std::vector<int32_t>* out) const {
  if (ignore_merges_) {
    const auto it = index_.find(byte_level::encode(word));
    if (it != index_.end()) {
      out->push_back(it->second);
      return Status::success();
    }
  }
  struct Sym {
    int32_t id;  // -1 once merged into its left neighbour
    int32_t prev, next;
  };
  std::vector<Sym> sym(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    const auto b = static_cast<uint8_t>(word[i]);
    const int32_t id = byte_token_[b];
    if (id < 0) {
      return make_error("BPE vocabulary has no token for byte 0x" +
                        std::string(1, "0123456789ABCDEF"[b >> 4]) +
                        std::string(1, "0123456789ABCDEF"[b & 15]));
    }
    sym[i] = {id, static_cast<int32_t>(i) - 1, static_cast<int32_t>(i + 1)};
  }
  const auto count = static_cast<int32_t>(word.size());
  struct Cand {
    int32_t rank, left, right, left_id, right_id, merged;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto consider = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = sym[static_cast<size_t>(left)].next;
    if (right >= count) return;
    const int32_t lid = sym[static_cast<size_t>(left)].id, rid = sym[static_cast<size_t>(right)].id;
    const auto it = merges_.find(pair_key(lid, rid));
    if (it != merges_.end()) heap.push({it->second.rank, left, right, lid, rid, it->second.id});
  };
  for (int32_t i = 0; i + 1 < count; ++i) consider(i);
  while (!heap.empty()) {
    const Cand c = heap.top();
    heap.pop();
    Sym& l = sym[static_cast<size_t>(c.left)];
    // Stale when either side changed since the candidate was pushed.
    if (l.id != c.left_id || l.next != c.right || sym[static_cast<size_t>(c.right)].id != c.right_id)
      continue;
    Sym& r = sym[static_cast<size_t>(c.right)];
    l.id = c.merged;
    l.next = r.next;
    if (r.next < count) sym[static_cast<size_t>(r.next)].prev = c.left;
    r.id = -1;
    consider(l.prev);
    consider(c.left);
  }
  for (int32_t i = 0; i < count; i = sym[static_cast<size_t>(i)].next)
    out->push_back(sym[static_cast<size_t>(i)].id);
  return Status::success();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> make_bpe_tokenizer(const BpeVocab& vocab) {
  return BpeTokenizer::create(vocab);
}

}  // namespace qc
