// Our side of the chat template agreement test:
//
//   chat_render_dump CASES.json OUT.json [TOKENIZER.json]
//
// CASES.json: [{"messages": [{"role", "content", "thinking"}], "options": {"system_prompt", "thinking",
// "keep_history_thinking", "add_generation_prompt"}}, ...]. OUT.json: {"template": chatml_jinja_template(),
// "cases": [{"text": render_chatml, "pieces_text": the render_chatml_pieces texts joined, "ids":
// encode_chat (only with a tokenizer)}]}. The Node side renders the template with @huggingface/jinja and
// compares. Exit status 2 on unusable input.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace {

using nlohmann::json;

// A missing key takes the default; a key of the wrong type is an error (json::type_error, caught in main).
template <class T>
T get_or(const json& j, const char* key, T fallback) {
  return j.contains(key) ? j.at(key).get<T>() : fallback;
}

std::vector<qc::ChatMessage> messages_of(const json& c) {
  std::vector<qc::ChatMessage> out;
  for (const json& m : c.at("messages")) {
    out.push_back({m.at("role").get<std::string>(), get_or<std::string>(m, "content", ""),
                   get_or<std::string>(m, "thinking", "")});
  }
  return out;
}

qc::ChatRenderOptions options_of(const json& c) {
  const json o = c.contains("options") ? c.at("options") : json::object();
  qc::ChatRenderOptions r;
  r.system_prompt = get_or<std::string>(o, "system_prompt", "");
  r.thinking = get_or<bool>(o, "thinking", true);
  r.keep_history_thinking = get_or<bool>(o, "keep_history_thinking", false);
  r.add_generation_prompt = get_or<bool>(o, "add_generation_prompt", true);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: chat_render_dump CASES.json OUT.json [TOKENIZER.json]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open the file\n", argv[1]);
    return 2;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  const json cases = json::parse(buf.str(), nullptr, /*allow_exceptions=*/false);
  if (!cases.is_array()) {
    std::fprintf(stderr, "%s: expected a JSON array of cases\n", argv[1]);
    return 2;
  }
  std::unique_ptr<qc::Tokenizer> tok;
  if (argc == 4) {
    auto t = qc::load_tokenizer_json(argv[3]);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.error().message.c_str());
      return 2;
    }
    tok = std::move(*t);
  }
  json out = {{"template", std::string(qc::chatml_jinja_template())}, {"cases", json::array()}};
  try {
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::vector<qc::ChatMessage> messages = messages_of(cases[i]);
      const qc::ChatRenderOptions options = options_of(cases[i]);
      json r = {{"text", qc::render_chatml(messages, options)}};
      std::string joined;
      for (const qc::ChatPiece& p : qc::render_chatml_pieces(messages, options)) joined += p.text;
      r["pieces_text"] = joined;
      if (tok) {
        const auto ids = qc::encode_chat(*tok, messages, options);
        if (!ids.ok()) {
          std::fprintf(stderr, "case %zu: encode_chat: %s\n", i + 1, ids.error().message.c_str());
          return 2;
        }
        r["ids"] = *ids;
      }
      out["cases"].push_back(std::move(r));
    }
  } catch (const json::exception& e) {
    std::fprintf(stderr, "%s: a case has a field of the wrong type: %s\n", argv[1], e.what());
    return 2;
  }
  std::ofstream o(argv[2], std::ios::binary);
  o << out.dump() << "\n";
  if (!o) {
    std::fprintf(stderr, "%s: cannot write the file\n", argv[2]);
    return 2;
  }
  return 0;
}
