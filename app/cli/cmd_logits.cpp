// `logits`: float32 logits of every position (row after row) and the final post-norm hidden states, for
// comparisons with outside references; a JSON header file beside (FILE.json) says the layout. With --mtp,
// the MTP block's logits and hidden states follow: at position p (0..n-2) it is fed token p+1 and the main
// model's hidden state of position p (QWEN35.md section 6), so its logits predict token p+2.
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"

namespace qc::cli {
namespace {

Result<std::vector<int32_t>> parse_tokens(const std::string& s) {
  std::vector<int32_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > (1l << 30)) {
      return make_error("--tokens: expected comma-separated non-negative ids, got \"" + item + "\"");
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) return make_error("--tokens: no ids given");
  return ids;
}

Status write_all(std::FILE* f, const float* p, size_t n, const std::string& path) {
  if (std::fwrite(p, sizeof(float), n, f) != n) return make_error(path + ": write failed (disk full?)");
  return {};
}

}  // namespace

Status cmd_logits(int argc, char** argv) {
  bool help = false;
  auto specs = engine_option_specs();
  specs.push_back({"tokens", true, "comma-separated token ids"});
  specs.push_back(
      {"out", true, "output file (float32 logits [n][vocab], then hidden [n][embd]); header in OUT.json"});
  specs.push_back({"mtp", false, "also write the MTP block's logits [n-1][vocab] and hidden [n-1][embd]"});
  QC_ASSIGN(
      app::Args args,
      parse_or_help(argc, argv, "qwenchat-cli logits --model F --tokens 1,2,3 --out FILE", specs, &help));
  if (help) return {};
  QC_ASSIGN(const std::vector<int32_t> ids, parse_tokens(args.get_or("tokens", "")));
  QC_ASSIGN(const std::string out, args.require("out"));
  QC_ASSIGN(EngineOptions eo, engine_options(args));
  QC_ASSIGN(auto engine, Engine::open(eo));
  report_context_cap(*engine);
  Backend& b = engine->backend();
  std::vector<float> logits, hidden;
  // One token per call: every backend returns the same numbers for N single steps as for one N-token
  // call, and single steps need no batch-sized scratch.
  for (size_t i = 0; i < ids.size(); ++i) {
    QC_ASSIGN(const StepOutput o, b.forward(std::span<const int32_t>(&ids[i], 1), static_cast<int>(i)));
    logits.insert(logits.end(), o.logits.begin(), o.logits.end());
    hidden.insert(hidden.end(), o.hidden.begin(), o.hidden.end());
  }
  std::vector<float> mtp_logits, mtp_hidden;
  const bool mtp = args.has("mtp");
  const size_t n_embd = static_cast<size_t>(engine->model().config().n_embd);
  if (mtp) {
    if (!b.has_mtp()) return make_error(eo.model_path + ": --mtp: the model has no MTP block");
    for (size_t p = 0; p + 1 < ids.size(); ++p) {
      const std::span<const float> h(hidden.data() + p * n_embd, n_embd);
      QC_ASSIGN(const StepOutput o, b.mtp_forward(ids[p + 1], h, static_cast<int>(p)));
      mtp_logits.insert(mtp_logits.end(), o.logits.begin(), o.logits.end());
      mtp_hidden.insert(mtp_hidden.end(), o.hidden.begin(), o.hidden.end());
    }
  }
  const std::string tmp = out + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return make_error(out + ": cannot create the output file");
  Status s = write_all(f, logits.data(), logits.size(), out);
  if (s.ok()) s = write_all(f, hidden.data(), hidden.size(), out);
  if (s.ok()) s = write_all(f, mtp_logits.data(), mtp_logits.size(), out);
  if (s.ok()) s = write_all(f, mtp_hidden.data(), mtp_hidden.size(), out);
  if (std::fclose(f) != 0 && s.ok()) s = make_error(out + ": write failed (disk full?)");
  if (!s.ok() || std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    return s.ok() ? Status(make_error(out + ": cannot rename the finished file into place")) : s;
  }
  const ModelConfig& c = engine->model().config();
  nlohmann::json header = {
      {"format", "qwenchat-logits"},
      {"version", 1},
      {"model", eo.model_path},
      {"backend", b.info().name},
      {"tokens", ids},
      {"n_tokens", ids.size()},
      {"n_vocab", c.n_vocab},
      {"n_embd", c.n_embd},
      {"dtype", "float32"},
      {"layout",
       "logits [n_tokens][n_vocab] row-major, then hidden [n_tokens][n_embd] (after output_norm)"
       "; with n_mtp > 0 then mtp_logits [n_mtp][n_vocab] and mtp_hidden [n_mtp][n_embd]"},
      {"n_mtp", mtp ? ids.size() - 1 : 0},
  };
  std::FILE* h = std::fopen((out + ".json").c_str(), "wb");
  if (!h) return make_error(out + ".json: cannot create the header file");
  const std::string text = header.dump(2) + "\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), h) == text.size();
  if (std::fclose(h) != 0 || !ok) return make_error(out + ".json: write failed (disk full?)");
  return {};
}

}  // namespace qc::cli
