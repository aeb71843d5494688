// Writes the safetensors fuzzer's seed corpus into argv[1] (creating it and the working corpus folder
// argv[2]): small valid files with every dtype family, metadata, a zero-sized tensor, and a header padded
// with spaces as the reference writer pads it. Generated at test time so no binary file is committed.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct T {
  std::string name, dtype, shape;  // shape as JSON, e.g. "[2,3]"
  size_t bytes;
};

std::vector<uint8_t> image(const std::vector<T>& ts, const std::string& metadata, bool pad) {
  std::string h = "{";
  if (!metadata.empty()) h += "\"__metadata__\":" + metadata;
  size_t off = 0;
  for (const T& t : ts) {
    if (h.size() > 1) h += ",";
    h += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":" + t.shape + ",\"data_offsets\":[" +
         std::to_string(off) + "," + std::to_string(off + t.bytes) + "]}";
    off += t.bytes;
  }
  h += "}";
  while (pad && h.size() % 8 != 0) h += ' ';
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(h.size() >> (8 * i));
  out.insert(out.end(), h.begin(), h.end());
  for (size_t i = 0; i < off; ++i) out.push_back(static_cast<uint8_t>(i * 37 + 11));
  return out;
}

bool write(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: safetensors_fuzz_seeds SEED_DIR CORPUS_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  ::mkdir(argv[1], 0755);
  ::mkdir(argv[2], 0755);
  bool ok = true;
  ok &= write(dir + "/weights.safetensors", image({{"model.embed_tokens.weight", "BF16", "[4,8]", 64},
                                                   {"model.norm.weight", "F32", "[8]", 32},
                                                   {"lm_head.weight", "F16", "[4,8]", 64}},
                                                  "{\"format\":\"pt\"}", true));
  ok &= write(dir + "/dtypes.safetensors", image({{"a", "I64", "[2]", 16},
                                                  {"b", "U8", "[3]", 3},
                                                  {"c", "BOOL", "[1]", 1},
                                                  {"d", "F8_E4M3", "[2,2]", 4},
                                                  {"e", "F4", "[4]", 2},
                                                  {"f", "F64", "[1]", 8},
                                                  {"g", "F32", "[0,5]", 0},
                                                  {"h", "C64", "[1]", 8}},
                                                 "", false));
  ok &= write(dir + "/conv.safetensors",
              image({{"model.layers.0.linear_attn.conv1d.weight", "BF16", "[6,1,4]", 48},
                     {"mtp.fc.weight", "F32", "[2,4]", 32}},
                    "{\"format\":\"pt\",\"note\":\"seed\"}", true));
  ok &= write(dir + "/empty.safetensors", image({}, "", true));
  if (!ok) {
    std::fprintf(stderr, "safetensors_fuzz_seeds: cannot write into %s\n", argv[1]);
    return 1;
  }
  return 0;
}
