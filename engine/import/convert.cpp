#include "import/convert.h"

#include <filesystem>

#include "gguf/writer.h"
#include "import/hf_tokenizer.h"
#include "model/row_parallel.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/gguf_vocab.h"

namespace qc {

Result<ConvertSummary> convert_hf_checkpoint(const ConvertOptions& o) {
  namespace fs = std::filesystem;
  const auto notice = [&](const std::string& s) {
    if (o.notice) o.notice(s);
  };
  QC_ASSIGN(const HfTextConfig config, read_hf_config((fs::path(o.input_dir) / "config.json").string()));
  QC_ASSIGN(const auto ckpt, Checkpoint::open(o.input_dir));
  std::string name = o.name;
  if (name.empty()) name = fs::path(o.input_dir).lexically_normal().filename().string();
  if (name.empty() || name == ".")
    name = fs::absolute(o.input_dir).lexically_normal().parent_path().filename().string();
  QC_ASSIGN(const ImportPlan plan, plan_qwen35_import(config, *ckpt, o.import, name));
  for (const std::string& n : plan.notices) notice(n);

  HfTokenizerOptions to;
  to.n_rows = plan.shape.n_vocab;
  to.config_eos = config.eos_token_id;
  to.config_bos = config.bos_token_id;
  QC_ASSIGN(const HfTokenizer tok, read_hf_tokenizer(o.input_dir, to));
  for (const std::string& n : tok.notices) notice(n);
  if (tok.chat_template.empty())
    notice("no chat template found (tokenizer_config.json, chat_template.jinja)");

  // Metadata: the same keys as every qwen35 file we write (model/qwen35_layout.h), then the tokenizer.
  gguf::Writer w;
  for (gguf::KeyValue& kv : qwen35_metadata(plan.shape, o.import.mix))
    w.set(std::move(kv.key), std::move(kv.value));
  w.set("general.name", gguf::Value::of_string(name));
  if (!config.mrope_section.empty()) {
    // llama.cpp writes the checkpoint's M-RoPE sections padded to 4 entries (text collapses them anyway).
    std::vector<int32_t> sections(config.mrope_section.begin(), config.mrope_section.end());
    sections.resize(4, 0);
    w.set("qwen35.rope.dimension_sections", gguf::Value::i32s(sections));
  }
  if (tok.sentencepiece) {
    write_spm_vocab_metadata(w, tok.spm, tok.chat_template);
  } else {
    write_bpe_vocab_metadata(w, tok.vocab, tok.chat_template);
  }

  ConvertSummary summary;
  summary.shape = plan.shape;
  summary.n_tokens = tok.sentencepiece ? tok.spm.pieces.size() : tok.vocab.tokens.size();
  summary.template_source = tok.template_source;
  for (const ImportTensor& t : plan.tensors) {
    QC_TRY(w.add_tensor(t.gguf.name, ggml_type_id(t.out_type), t.gguf.shape));
    summary.tensor_bytes +=
        dtype_bytes(t.out_type, static_cast<uint64_t>(t.rows) * static_cast<uint64_t>(t.cols));
  }
  QC_TRY(w.begin(o.out_path));

  ConvertProgress p;
  p.total = plan.tensors.size();
  p.bytes_total = summary.tensor_bytes;
  const int threads = o.n_threads > 0 ? o.n_threads : default_writer_threads();
  std::vector<uint8_t> bytes;
  for (const ImportTensor& t : plan.tensors) {
    const CheckpointTensor* src = ckpt->find(t.hf_name);  // present: checked by the plan
    QC_TRY(convert_tensor(t, *src, &bytes, threads));
    QC_TRY(w.write_tensor(t.gguf.name, bytes));
    ++p.done;
    p.tensor = t.gguf.name;
    p.bytes_done += bytes.size();
    if (o.progress) o.progress(p);
  }
  QC_TRY(w.finish());
  summary.n_tensors = plan.tensors.size();
  return summary;
}

}  // namespace qc
