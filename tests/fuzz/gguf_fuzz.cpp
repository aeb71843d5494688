// libFuzzer target for the GGUF reader: any byte string goes through File::from_bytes. When it is
// accepted, every tensor byte and every metadata value is read (through each typed getter too), and the
// reader's promises are checked: a broken promise traps, so the fuzzer reports logic bugs as well as the
// memory errors ASan/UBSan catch. from_bytes copies the input into an exactly sized buffer, so a read one
// byte past the end is an ASan report.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/reader.h"

namespace {

using qc::gguf::File;
using qc::gguf::TensorInfo;
using qc::gguf::Value;
using qc::gguf::ValueType;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

uint64_t walk(const Value& v, uint32_t depth) {
  require(depth <= 8);  // the default ReaderLimits::max_array_depth
  uint64_t h = static_cast<uint64_t>(v.type) + v.describe_type().size();
  if (v.is_number()) h += static_cast<uint64_t>(v.as_int()) + static_cast<uint64_t>(v.as_double() != 0.0);
  if (v.type == ValueType::kBool) require(v.u64 <= 1);
  for (const char c : v.str) h = h * 31 + static_cast<unsigned char>(c);
  if (v.type == ValueType::kArray) {
    for (const Value& e : v.array) {
      require(e.type == v.elem_type);
      h += walk(e, depth + 1);
    }
  } else {
    require(v.array.empty());
  }
  return h;
}

template <class R>
uint64_t touch(const R& r) {
  return r.ok() ? 1 : r.error().message.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto r = File::from_bytes(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (!r.ok()) {
    require(r.error().message.rfind("fuzz.gguf: ", 0) == 0);  // every error names the file
    return 0;
  }
  const File& f = **r;
  require(f.version() == 2 || f.version() == 3);
  require(f.alignment() != 0 && (f.alignment() & (f.alignment() - 1)) == 0);
  uint64_t sink = 0;
  for (const auto& kv : f.metadata()) {
    require(!kv.key.empty());
    require(f.find(kv.key) == &kv.value);
    sink += walk(kv.value, 0);
    sink += touch(f.get_u32(kv.key)) + touch(f.get_f32(kv.key)) + touch(f.get_string(kv.key)) +
            touch(f.get_bool(kv.key)) + touch(f.get_strings(kv.key)) + touch(f.get_ints(kv.key)) +
            touch(f.get_floats(kv.key));
  }
  for (const TensorInfo& t : f.tensors()) {
    require(f.find_tensor(t.name) == &t);
    require(t.n_dims >= 1 && t.n_dims <= 4);
    require(t.offset % f.alignment() == 0);
    require(f.data_offset() + t.offset + t.nbytes <= f.file_size());
    const uint8_t* p = f.tensor_data(t);
    for (uint64_t i = 0; i < t.nbytes; ++i) sink += p[i];
  }
  // Keep the reads from being optimised away.
  volatile uint64_t keep = sink;
  (void)keep;
  return 0;
}
