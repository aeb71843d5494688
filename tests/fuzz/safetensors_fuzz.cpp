// libFuzzer target for the safetensors reader: any byte string goes through st::File::from_bytes. When it
// is accepted, every tensor's bytes are read and the reader's promises are checked (tensors tile the data
// section in order, sizes match dtype x shape, find() returns each tensor); a broken promise traps, so the
// fuzzer reports logic bugs as well as the memory errors ASan/UBSan catch. from_bytes copies the input
// into an exactly sized buffer, so a read one byte past the end is an ASan report.
#include <cstddef>
#include <cstdint>
#include <span>

#include "import/safetensors.h"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using qc::st::File;
  const auto r = File::from_bytes(std::span<const uint8_t>(data, size), "fuzz.safetensors");
  if (!r.ok()) {
    require(r.error().message.rfind("fuzz.safetensors: ", 0) == 0);  // every error names the file
    return 0;
  }
  const File& f = **r;
  uint64_t sink = 0, pos = 0;
  for (const qc::st::Tensor& t : f.tensors()) {
    require(f.find(t.name) == &t);
    require(t.begin == pos && t.end >= t.begin);
    pos = t.end;
    require(t.n_elements() * qc::st::dtype_bits(t.dtype) == 8 * t.nbytes());
    for (const uint8_t b : f.data(t)) sink += b;
    sink += t.shape_str().size();
  }
  require(size >= 8 && pos <= size - 8);
  for (const auto& [k, v] : f.metadata()) sink += k.size() + v.size();
  volatile uint64_t keep = sink;
  (void)keep;
  return 0;
}
