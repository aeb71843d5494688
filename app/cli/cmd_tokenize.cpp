// `tokenize`: ids of a text as JSON, from a model's vocabulary or a Hugging Face tokenizer.json; with
// --input, one JSON string per line in, one JSON array of ids per line out.
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "gguf/reader.h"
#include "qwenchat/json_depth.h"
#include "tokenizer/tokenizer.h"

namespace qc::cli {

Status cmd_tokenize(int argc, char** argv) {
  bool help = false;
  QC_ASSIGN(app::Args args,
            parse_or_help(argc, argv,
                          "qwenchat-cli tokenize (--model FILE | --tokenizer tokenizer.json) (--text TEXT | --input FILE)",
                          {{"model", true, "GGUF whose vocabulary to use (default: the shipped model)"},
                           {"tokenizer", true, "a Hugging Face tokenizer.json instead of a model"},
                           {"text", true, "text to encode"},
                           {"input", true, "file with one JSON string per line"},
                           {"special", false, "parse special tokens written in the text (<|im_start|>)"}},
                          &help));
  if (help) return {};
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<gguf::File> file;
  if (auto tj = args.get("tokenizer")) {
    QC_ASSIGN(tok, load_tokenizer_json(*tj));
  } else {
    QC_ASSIGN(const std::string path, model_path(args));
    QC_ASSIGN(file, gguf::File::open(path));
    QC_ASSIGN(tok, load_tokenizer(*file));
  }
  const bool special = args.has("special");
  auto encode_line = [&](const std::string& text) -> Status {
    QC_ASSIGN(const std::vector<int32_t> ids, tok->encode(text, special));
    std::printf("%s\n", nlohmann::json(ids).dump().c_str());
    return {};
  };
  if (auto text = args.get("text")) return encode_line(*text);
  QC_ASSIGN(const std::string input, args.require("input"));
  std::ifstream in(input, std::ios::binary);
  if (!in) return make_error(input + ": cannot open the input file");
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    QC_TRY(check_json_depth(line, input + ":" + std::to_string(lineno)));
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_string()) {
      return make_error(input + ":" + std::to_string(lineno) + ": expected one JSON string per line");
    }
    QC_TRY(encode_line(j.get<std::string>()));
  }
  return {};
}

}  // namespace qc::cli
