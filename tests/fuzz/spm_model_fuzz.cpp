// libFuzzer target for SentencePiece .model files: any byte string goes through our protobuf reader
// (parse_spm_model_proto) and, when accepted, the rest of load_sentencepiece_model: the same bytes into
// libsentencepiece (not instrumented, but an abort or a crash in it still stops the fuzzer), then a few
// encodes and decodes. Checked: every error names the input; an accepted vocabulary has one score and
// one type (1..6) per piece and special ids in range; ids from encode are in range. The vocabulary is
// also rebuilt through make_spm_tokenizer (our own proto writer). A broken promise traps.
//
// load_sentencepiece_model takes a path, so the input is written to an in-memory file first.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tokenizer/spm_proto.h"
#include "tokenizer/tokenizer.h"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

// An anonymous in-memory file (memfd), reopened by path through /proc/self/fd: nothing is left behind
// however the fuzzer exits.
struct ModelFile {
  int fd = -1;
  std::string path;
};

const ModelFile& model_file() {
  static const ModelFile f = [] {
    const int fd = ::memfd_create("qwenchat_spm_fuzz", 0);
    require(fd >= 0);
    return ModelFile{fd, "/proc/self/fd/" + std::to_string(fd)};
  }();
  return f;
}

void set_model_bytes(std::string_view bytes) {
  const int fd = model_file().fd;
  require(::ftruncate(fd, 0) == 0);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    require(n > 0);
    done += static_cast<size_t>(n);
  }
}

void exercise(const qc::Tokenizer& t) {
  const int n = t.n_vocab();
  require(n > 0);
  require(t.token_bytes(-1).empty() && t.token_bytes(n).empty());
  for (const std::string_view s :
       {std::string_view("Hello world  <s> </s>\n\t123"),
        std::string_view("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x91\x8D \xff")}) {
    for (const bool special : {false, true}) {
      const auto ids = t.encode(s, special);
      if (!ids.ok()) continue;
      for (const int32_t id : *ids) require(id >= 0 && id < n);
      (void)t.decode(*ids);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string normalizer;
  const auto v = qc::parse_spm_model_proto(input, "fuzz.model", &normalizer);
  if (!v.ok()) {
    require(v.error().message.rfind("fuzz.model: ", 0) == 0);
    return 0;
  }
  const auto n = static_cast<int64_t>(v->pieces.size());
  require(n > 0 && v->scores.size() == v->pieces.size() && v->types.size() == v->pieces.size());
  for (const int32_t type : v->types) require(type >= 1 && type <= 6);
  for (const int32_t id : {v->bos, v->eos, v->pad}) require(id < n);

  set_model_bytes(input);
  const auto loaded = qc::load_sentencepiece_model(model_file().path);
  if (loaded.ok()) {
    require((*loaded)->n_vocab() == n);
    exercise(**loaded);
  } else {
    require(loaded.error().message.rfind(model_file().path + ": ", 0) == 0);
  }
  const auto rebuilt = qc::make_spm_tokenizer(*v);
  if (rebuilt.ok()) exercise(**rebuilt);
  return 0;
}
