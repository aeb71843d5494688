// model/tensor_stream.h: producing tensor i + 1 while tensor i is written gives the same file as writing
// each tensor in turn, and errors come back in file order (a write error of an earlier tensor before a
// produce error of a later one) with no file left behind.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gguf/types.h"
#include "gguf/writer.h"
#include "model/tensor_stream.h"
#include "temp_dir.h"

namespace qc {
namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Three F32 tensors of different sizes (the largest in the middle, so both buffers are reused).
const std::vector<std::vector<uint64_t>> kShapes = {{8, 3}, {64, 5}, {16}};

std::vector<uint8_t> tensor_bytes(size_t i) {
  uint64_t n = 4;
  for (uint64_t d : kShapes[i]) n *= d;
  std::vector<uint8_t> b(n);
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>(k * 7 + i * 31);
  return b;
}

void declare(gguf::Writer& w) {
  for (size_t i = 0; i < kShapes.size(); ++i) {
    ASSERT_TRUE(
        w.add_tensor("t" + std::to_string(i), static_cast<uint32_t>(gguf::TensorType::kF32), kShapes[i])
            .ok());
  }
}

std::vector<StreamedTensor> streamed() {
  std::vector<StreamedTensor> t;
  for (size_t i = 0; i < kShapes.size(); ++i) t.push_back({"t" + std::to_string(i), tensor_bytes(i).size()});
  return t;
}

TEST(TensorStream, WritesTheSameFileAsWritingEachTensorInTurn) {
  test::TempDir dir;
  gguf::Writer plain;
  declare(plain);
  std::vector<std::vector<uint8_t>> data;
  for (size_t i = 0; i < kShapes.size(); ++i) data.push_back(tensor_bytes(i));
  ASSERT_TRUE(plain.write_all(dir.file("plain.gguf"), data).ok());

  gguf::Writer w;
  declare(w);
  ASSERT_TRUE(w.begin(dir.file("streamed.gguf")).ok());
  std::vector<size_t> written;
  const Status s = stream_tensors(
      w, streamed(),
      [](size_t i, std::span<uint8_t> out) -> Status {
        const std::vector<uint8_t> b = tensor_bytes(i);
        if (b.size() != out.size()) return make_error("size");
        std::copy(b.begin(), b.end(), out.begin());
        return {};
      },
      [&](size_t i) { written.push_back(i); });
  ASSERT_TRUE(s.ok()) << s.error().describe();
  ASSERT_TRUE(w.finish().ok());
  EXPECT_EQ(written, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(read_all(dir.file("plain.gguf")), read_all(dir.file("streamed.gguf")));
}

TEST(TensorStream, AProduceErrorStopsTheStreamAndIsReturned) {
  test::TempDir dir;
  gguf::Writer w;
  declare(w);
  ASSERT_TRUE(w.begin(dir.file("x.gguf")).ok());
  std::vector<size_t> produced;
  const Status s = stream_tensors(
      w, streamed(),
      [&](size_t i, std::span<uint8_t> out) -> Status {
        produced.push_back(i);
        if (i == 1) return make_error("tensor 1 failed");
        std::fill(out.begin(), out.end(), uint8_t{0});
        return {};
      },
      nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "tensor 1 failed");
  EXPECT_EQ(produced, (std::vector<size_t>{0, 1}));
}

TEST(TensorStream, AnEarlierWriteErrorComesBeforeALaterProduceError) {
  test::TempDir dir;
  gguf::Writer w;
  declare(w);
  ASSERT_TRUE(w.begin(dir.file("x.gguf")).ok());
  std::vector<StreamedTensor> tensors = streamed();
  tensors[0].name = "not_t0";  // the writer refuses it: declaration order names t0 first
  const Status s = stream_tensors(
      w, tensors,
      [&](size_t i, std::span<uint8_t> out) -> Status {
        if (i == 1) return make_error("tensor 1 failed");
        std::fill(out.begin(), out.end(), uint8_t{0});
        return {};
      },
      nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("expected tensor t0 next"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace qc
