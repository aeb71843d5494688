#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace qc {

void SpecialMatcher::add(std::string_view text, int32_t id) {
  if (text.empty()) return;
  if (!exact_.emplace(std::string(text), id).second) return;
  by_first_byte_[static_cast<uint8_t>(text[0])].emplace_back(std::string(text), id);
}

void SpecialMatcher::finish() {
  for (auto& bucket : by_first_byte_) {
    std::stable_sort(bucket.begin(), bucket.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }
}

int32_t SpecialMatcher::find(std::string_view text) const {
  const auto it = exact_.find(std::string(text));
  return it == exact_.end() ? -1 : it->second;
}

void SpecialMatcher::split_for_encode(std::string_view input, bool parse_special, std::string* lossy,
                                      std::vector<Piece>* out) const {
  std::string_view text = input;
  if (!utf8_valid(input)) {
    *lossy = utf8_lossy(input);
    text = *lossy;
  }
  if (parse_special) {
    split(text, out);
  } else {
    out->push_back({text, -1});
  }
}

void SpecialMatcher::split(std::string_view text, std::vector<Piece>* out) const {
  size_t plain_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto& bucket = by_first_byte_[static_cast<uint8_t>(text[i])];
    const std::pair<std::string, int32_t>* hit = nullptr;
    for (const auto& cand : bucket) {
      if (text.compare(i, cand.first.size(), cand.first) == 0) {
        hit = &cand;  // longest first: the first hit is the longest
        break;
      }
    }
    if (!hit) {
      ++i;
      continue;
    }
    if (i > plain_start) out->push_back({text.substr(plain_start, i - plain_start), -1});
    out->push_back({text.substr(i, hit->first.size()), hit->second});
    i += hit->first.size();
    plain_start = i;
  }
  if (plain_start < text.size()) out->push_back({text.substr(plain_start), -1});
}

SpecialTokens resolve_special_tokens(const SpecialMatcher& specials, int32_t bos, int32_t eos, int32_t pad,
                                     int32_t eot) {
  SpecialTokens s;
  s.bos = bos;
  s.pad = pad;
  s.im_start = specials.find("<|im_start|>");
  s.im_end = specials.find("<|im_end|>");
  s.think_begin = specials.find("<think>");
  s.think_end = specials.find("</think>");
  const int32_t endoftext = specials.find("<|endoftext|>");
  s.eos = eos >= 0 ? eos : endoftext;
  for (const int32_t id : {s.im_end, s.eos, endoftext, eot}) {
    if (id >= 0 && std::find(s.stop.begin(), s.stop.end(), id) == s.stop.end()) s.stop.push_back(id);
  }
  return s;
}

}  // namespace qc
