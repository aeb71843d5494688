#include "tokenizer/bpe_trainer.h"

#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"

namespace qc {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
int32_t left_of(uint64_t k) {
  return static_cast<int32_t>(k >> 32);
}
int32_t right_of(uint64_t k) {
  return static_cast<int32_t>(k & 0xFFFFFFFFu);
}

struct Word {
  std::vector<int32_t> syms;
  int64_t count = 0;
};

// Counting state. Pair counts are kept exact incrementally: a merge subtracts the affected words' old
// pairs and adds their new ones, so one merge costs the length of the words that hold the pair, not a
// pass over the corpus. The best pair comes from a max-heap with lazy invalidation: an entry whose count
// no longer matches is pushed again with the current count (counts of existing pairs only fall, so the
// stale entry sits too high, never too low; pairs with the new token are pushed with their final counts
// after each merge).
class Trainer {
 public:
  Trainer(std::vector<Word> words, int min_count) : words_(std::move(words)), min_count_(min_count) {
    for (int b = 0; b < 256; ++b) {
      tokens_.push_back(byte_level::encode(std::string(1, static_cast<char>(b))));
      index_.emplace(tokens_.back(), b);
    }
    for (size_t w = 0; w < words_.size(); ++w) add_pairs(static_cast<int32_t>(w), nullptr);
    for (const auto& [k, c] : counts_) heap_.push({c, k});
  }

  // Runs up to n merges; returns the merges in "left right" form.
  std::vector<std::string> run(int n) {
    std::vector<std::string> merges;
    while (static_cast<int>(merges.size()) < n && !heap_.empty()) {
      const Entry e = heap_.top();
      heap_.pop();
      const auto it = counts_.find(e.pair);
      const int64_t now = it == counts_.end() ? 0 : it->second;
      if (now != e.count) {  // stale: the count fell since the push; requeue at its place
        if (now > 0) heap_.push({now, e.pair});
        continue;
      }
      if (now < min_count_) break;  // the best pair is too rare: done
      merge(e.pair);
      merges.push_back(tokens_[static_cast<size_t>(left_of(e.pair))] + " " +
                       tokens_[static_cast<size_t>(right_of(e.pair))]);
    }
    return merges;
  }

  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  struct Entry {
    int64_t count;
    uint64_t pair;
  };
  // Max-heap order: higher count first, then the lexicographically smaller (left, right).
  struct Less {
    const std::vector<std::string>* tok;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.count != b.count) return a.count < b.count;
      const std::string& al = (*tok)[static_cast<size_t>(left_of(a.pair))];
      const std::string& bl = (*tok)[static_cast<size_t>(left_of(b.pair))];
      if (al != bl) return al > bl;
      return (*tok)[static_cast<size_t>(right_of(a.pair))] > (*tok)[static_cast<size_t>(right_of(b.pair))];
    }
  };

  void add_pairs(int32_t w, std::unordered_set<uint64_t>* touched) {
    const Word& word = words_[static_cast<size_t>(w)];
    for (size_t i = 0; i + 1 < word.syms.size(); ++i) {
      const uint64_t k = pair_key(word.syms[i], word.syms[i + 1]);
      counts_[k] += word.count;
      where_[k].insert(w);
      if (touched) touched->insert(k);
    }
  }
  void remove_pairs(int32_t w) {
    const Word& word = words_[static_cast<size_t>(w)];
    for (size_t i = 0; i + 1 < word.syms.size(); ++i)
      counts_[pair_key(word.syms[i], word.syms[i + 1])] -= word.count;
  }

  void merge(uint64_t pair) {
    const int32_t a = left_of(pair), b = right_of(pair);
    const std::string text = tokens_[static_cast<size_t>(a)] + tokens_[static_cast<size_t>(b)];
    auto [it, fresh] = index_.emplace(text, static_cast<int32_t>(tokens_.size()));
    if (fresh) tokens_.push_back(text);
    const int32_t c = it->second;
    std::unordered_set<uint64_t> touched;
    const std::unordered_set<int32_t> holders = std::move(where_[pair]);
    where_.erase(pair);
    for (const int32_t w : holders) {
      std::vector<int32_t>& s = words_[static_cast<size_t>(w)].syms;
      bool has = false;
      for (size_t i = 0; i + 1 < s.size() && !has; ++i) has = s[i] == a && s[i + 1] == b;
      if (!has) continue;  // a stale holder
      remove_pairs(w);
      std::vector<int32_t> merged;
      merged.reserve(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          merged.push_back(c);
          ++i;
        } else {
          merged.push_back(s[i]);
        }
      }
      s = std::move(merged);
      add_pairs(w, &touched);
    }
    for (const uint64_t k : touched) {
      if (left_of(k) == c || right_of(k) == c) heap_.push({counts_[k], k});
    }
  }

  std::vector<Word> words_;
  int min_count_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> index_;
  std::unordered_map<uint64_t, int64_t> counts_;
  std::unordered_map<uint64_t, std::unordered_set<int32_t>> where_;
  std::priority_queue<Entry, std::vector<Entry>, Less> heap_{Less{&tokens_}};
};

}  // namespace

std::vector<std::string> chatml_special_tokens() {
  return {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"};
}

Result<BpeVocab> train_bpe(std::string_view corpus, const BpeTrainOptions& o) {
  if (o.n_merges < 0 || o.n_merges > (1 << 22)) {
    return make_error("BPE training: n_merges must be in [0, 4194304], got " + std::to_string(o.n_merges));
  }
  if (o.min_pair_count < 1) {
    return make_error("BPE training: min_pair_count must be at least 1, got " +
                      std::to_string(o.min_pair_count));
  }
  QC_ASSIGN(const auto pre, PreTokenizer::create(o.pre));
  SpecialMatcher specials;
  for (size_t i = 0; i < o.special_tokens.size(); ++i) {
    const std::string& s = o.special_tokens[i];
    if (s.empty() || !utf8_valid(s) || specials.find(s) >= 0) {
      return make_error("BPE training: special token " + std::to_string(i) + " (\"" + s +
                        "\") is empty, repeated or not valid UTF-8");
    }
    specials.add(s, static_cast<int32_t>(i));
  }
  specials.finish();

  // Word counts in a sorted map so the word order (and so everything after) is the same on every run.
  const std::string text = utf8_lossy(corpus);
  std::vector<SpecialMatcher::Piece> pieces;
  specials.split(text, &pieces);
  std::map<std::string, int64_t> counts;
  std::vector<std::string_view> words;
  for (const auto& p : pieces) {
    if (p.id >= 0) continue;
    words.clear();
    QC_TRY(pre->split(p.text, &words));
    for (const std::string_view w : words) ++counts[std::string(w)];
  }
  std::vector<Word> list;
  list.reserve(counts.size());
  for (const auto& [w, c] : counts) {
    Word word;
    word.count = c;
    for (const char ch : w) word.syms.push_back(static_cast<uint8_t>(ch));
    list.push_back(std::move(word));
  }

  Trainer trainer(std::move(list), o.min_pair_count);
  BpeVocab v;
  v.pre = o.pre;
  v.merges = trainer.run(o.n_merges);
  v.tokens = trainer.tokens();
  v.token_types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (const std::string& s : o.special_tokens) {
    if (s == "<|endoftext|>") v.eos = v.pad = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(s);
    v.token_types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  return v;
}

}  // namespace qc
