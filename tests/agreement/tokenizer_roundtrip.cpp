// The decode side of the tokenizer agreement test:
//
//   tokenizer_roundtrip TOKENIZER.json CASES.jsonl EXPECTED.jsonl
//
// For every case string s (valid UTF-8, one JSON string per line) and Hugging Face's ids for it (one JSON
// array per line): decode(encode(s)) == s with special parsing on (the mode `tokenize --special` uses),
// decode(HF ids) == s, and the token bytes streamed through Utf8Stream give s too (what the chat view
// shows). Prints the counts; exit status 1 on any difference, 2 on unusable input.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace {

// One JSON value per non-empty line; an unreadable file or a bad line is reported and gives false.
bool read_jsonl(const char* path, std::vector<nlohmann::json>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open the file\n", path);
    return false;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      std::fprintf(stderr, "%s:%d: not valid JSON\n", path, lineno);
      return false;
    }
    out->push_back(std::move(j));
  }
  return true;
}

std::string clip(const std::string& s) {
  const std::string j = nlohmann::json(s).dump();
  return j.size() > 200 ? j.substr(0, 200) + "..." : j;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tokenizer_roundtrip TOKENIZER.json CASES.jsonl EXPECTED.jsonl\n");
    return 2;
  }
  auto tok = qc::load_tokenizer_json(argv[1]);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.error().message.c_str());
    return 2;
  }
  std::vector<nlohmann::json> cases, expected;
  if (!read_jsonl(argv[2], &cases) || !read_jsonl(argv[3], &expected)) return 2;
  if (cases.size() != expected.size()) {
    std::fprintf(stderr, "%zu cases but %zu expected lines\n", cases.size(), expected.size());
    return 2;
  }
  size_t ours_ok = 0, hf_ok = 0, stream_ok = 0, shown = 0;
  const auto report = [&](size_t i, const char* what, const std::string& want, const std::string& got) {
    if (shown++ < 10) {
      std::printf("case %zu: %s\n  want %s\n  got  %s\n", i + 1, what, clip(want).c_str(), clip(got).c_str());
    }
  };
  // Counts a match, shows a mismatch.
  const auto check = [&](size_t i, const char* what, const std::string& want, const std::string& got,
                         size_t* count) {
    if (got == want) {
      ++*count;
    } else {
      report(i, what, want, got);
    }
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].is_string() || !expected[i].is_array()) {
      std::fprintf(stderr, "line %zu: expected a string case and an array of ids\n", i + 1);
      return 2;
    }
    const std::string s = cases[i].get<std::string>();
    std::vector<int32_t> hf_ids;
    for (const nlohmann::json& id : expected[i]) {
      if (!id.is_number_integer()) {
        std::fprintf(stderr, "%s:%zu: an id is not an integer\n", argv[3], i + 1);
        return 2;
      }
      hf_ids.push_back(id.get<int32_t>());
    }
    const auto ids = (*tok)->encode(s, /*parse_special=*/true);
    if (!ids.ok()) {
      report(i, "encode failed", s, ids.error().message);
      continue;
    }
    check(i, "decode(encode(s)) != s", s, (*tok)->decode(*ids), &ours_ok);
    check(i, "decode(HF ids) != s", s, (*tok)->decode(hf_ids), &hf_ok);
    qc::Utf8Stream stream;
    std::string streamed;
    for (const int32_t id : *ids) streamed += stream.push((*tok)->token_bytes(id));
    streamed += stream.flush();
    check(i, "streamed token bytes != s", s, streamed, &stream_ok);
  }
  const size_t n = cases.size();
  std::printf("decode(encode(s)) == s: %zu/%zu\ndecode(HF ids) == s: %zu/%zu\nstreamed == s: %zu/%zu\n",
              ours_ok, n, hf_ok, n, stream_ok, n);
  return ours_ok == n && hf_ok == n && stream_ok == n ? 0 : 1;
}
