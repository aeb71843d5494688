// Byte-level GGUF image builder for tests: writes exactly the fields it is told to, so a test can build a
// valid file, an old version, or any malformed variant without committing binary files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/reader.h"
#include "gguf/types.h"

namespace qc::gguf::testing {

class Image {
 public:
  std::vector<uint8_t> bytes;

  Image& raw(std::string_view s) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  Image& uint(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Image& u8(uint8_t v) { return uint(v, 1); }
  Image& u32(uint32_t v) { return uint(v, 4); }
  Image& u64(uint64_t v) { return uint(v, 8); }
  Image& f32(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return u32(b);
  }
  Image& str(std::string_view s) { return u64(s.size()).raw(s); }
  Image& zeros(uint64_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  Image& pad(uint64_t alignment) { return zeros((alignment - bytes.size() % alignment) % alignment); }

  Image& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return raw("GGUF").u32(version).u64(n_tensors).u64(n_kv);
  }
  // Key and value type; the caller appends the value.
  Image& key(std::string_view k, ValueType t) { return str(k).u32(static_cast<uint32_t>(t)); }
  Image& kv_u32(std::string_view k, uint32_t v) { return key(k, ValueType::kU32).u32(v); }
  Image& kv_str(std::string_view k, std::string_view v) { return key(k, ValueType::kString).str(v); }
  Image& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(offset);
  }
  size_t size() const { return bytes.size(); }
};

inline Result<std::unique_ptr<File>> parse(const Image& img, const ReaderLimits& limits = {}) {
  return File::from_bytes(img.bytes, "test.gguf", limits);
}

// Parses `img` and requires an error whose text contains every one of `parts`.
inline void expect_error(const Image& img, std::vector<std::string> parts, const ReaderLimits& limits = {}) {
  const auto r = parse(img, limits);
  ASSERT_FALSE(r.ok()) << "expected the image to be refused";
  for (const std::string& p : parts) {
    EXPECT_NE(r.error().message.find(p), std::string::npos)
        << "error text lacks \"" << p << "\": " << r.error().message;
  }
}

// A fresh folder under the build tree, one per test, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(QWENCHAT_BINARY_DIR) / "gguf_test_tmp" /
            (std::string(info->test_suite_name()) + "." + info->name() + "." + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace qc::gguf::testing
