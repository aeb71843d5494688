// Our pre-tokenizer's splits, for the code point sweep of the tokenizer agreement test:
//
//   pretokenize_dump NAME INPUT.jsonl       one JSON array of pre-token byte lengths per input line
//   pretokenize_dump --unassigned INPUT.jsonl
//                                           per line 1 when the string is one code point that PCRE2's
//                                           Unicode tables call unassigned (\p{Cn}), else 0
//
// INPUT.jsonl holds one JSON string per line. The arrays print exactly as JSON.stringify writes them, so
// the Node side compares lines as text. Exit status 2 on unusable input.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include "tokenizer/pretokenizer.h"

namespace {

// Calls `fn` with each line's string; false (after a message) on an unreadable file or a bad line.
template <class Fn>
bool for_each_string(const char* path, Fn fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open the file\n", path);
    return false;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_string()) {
      std::fprintf(stderr, "%s:%d: expected a JSON string\n", path, lineno);
      return false;
    }
    if (!fn(j.get_ref<const std::string&>())) return false;
  }
  return true;
}

int unassigned(const char* path) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  const std::string re = R"(^\p{Cn}$)";
  std::unique_ptr<pcre2_code, void (*)(pcre2_code*)> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(), PCRE2_UTF | PCRE2_UCP, &err, &offset,
                    nullptr),
      pcre2_code_free);
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      code ? pcre2_match_data_create_from_pattern(code.get(), nullptr) : nullptr, pcre2_match_data_free);
  if (!code || !md) {
    std::fprintf(stderr, "PCRE2 cannot compile %s\n", re.c_str());
    return 2;
  }
  const bool ok = for_each_string(path, [&](const std::string& s) {
    const int rc =
        pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md.get(), nullptr);
    std::printf("%d\n", rc > 0 ? 1 : 0);
    return true;
  });
  return ok ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pretokenize_dump (NAME | --unassigned) INPUT.jsonl\n");
    return 2;
  }
  if (std::string(argv[1]) == "--unassigned") return unassigned(argv[2]);
  auto pre = qc::PreTokenizer::create(argv[1]);
  if (!pre.ok()) {
    std::fprintf(stderr, "%s\n", pre.error().message.c_str());
    return 2;
  }
  std::vector<std::string_view> words;
  std::string out;
  const bool ok = for_each_string(argv[2], [&](const std::string& s) {
    words.clear();
    if (const qc::Status st = (*pre)->split(s, &words); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.error().message.c_str());
      return false;
    }
    out = "[";
    for (size_t i = 0; i < words.size(); ++i) out += (i ? "," : "") + std::to_string(words[i].size());
    out += "]\n";
    std::fputs(out.c_str(), stdout);
    return true;
  });
  return ok ? 0 : 2;
}
