#include "model/kquant.h"

#include <cstring>
#include <string>

#include "model/quant.h"

namespace qc {
namespace {

constexpr int kQK = 256;  // values per K-quant super-block (ggml's QK_K)

float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes: j < 4 keep them in the low 6 bits of bytes j
// and j+4; j >= 4 keep the low 4 bits in byte j+4 (scale low nibble, min high nibble) and the top 2 bits in
// bits 6-7 of bytes j-4 (scale) and j (min). ggml-quants.c get_scale_min_k4.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

void dequantize_q4_0(const uint8_t* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 18, y += 32) {
    const float d = load_f16(x);
    const uint8_t* qs = x + 2;
    for (int j = 0; j < 16; ++j) {
      const int x0 = (qs[j] & 0x0F) - 8;
      const int x1 = (qs[j] >> 4) - 8;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_q5_0(const uint8_t* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 22, y += 32) {
    const float d = load_f16(x);
    uint32_t qh;
    std::memcpy(&qh, x + 2, 4);  // little-endian host assumed, as everywhere in the GGUF reader
    const uint8_t* qs = x + 6;
    for (int j = 0; j < 16; ++j) {
      const uint8_t xh_0 = static_cast<uint8_t>(((qh >> (j + 0)) << 4) & 0x10);
      const uint8_t xh_1 = static_cast<uint8_t>((qh >> (j + 12)) & 0x10);
      const int32_t x0 = ((qs[j] & 0x0F) | xh_0) - 16;
      const int32_t x1 = ((qs[j] >> 4) | xh_1) - 16;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void dequantize_q4_k(const uint8_t* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 144) {
    const float d = load_f16(x);
    const float min = load_f16(x + 2);
    const uint8_t* scales = x + 4;
    const uint8_t* q = x + 16;
    int is = 0;
    uint8_t sc, m;
    for (int j = 0; j < kQK; j += 64) {
      get_scale_min_k4(is + 0, scales, &sc, &m);
      const float d1 = d * sc;
      const float m1 = min * m;
      get_scale_min_k4(is + 1, scales, &sc, &m);
      const float d2 = d * sc;
      const float m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
      q += 32;
      is += 2;
    }
  }
}

void dequantize_q5_k(const uint8_t* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 176) {
    const float d = load_f16(x);
    const float min = load_f16(x + 2);
    const uint8_t* scales = x + 4;
    const uint8_t* qh = x + 16;
    const uint8_t* ql = x + 48;
    int is = 0;
    uint8_t sc, m;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < kQK; j += 64) {
      get_scale_min_k4(is + 0, scales, &sc, &m);
      const float d1 = d * sc;
      const float m1 = min * m;
      get_scale_min_k4(is + 1, scales, &sc, &m);
      const float d2 = d * sc;
      const float m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      ql += 32;
      is += 2;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

void dequantize_q6_k(const uint8_t* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 210) {
    const float d = load_f16(x + 208);
    const uint8_t* ql = x;
    const uint8_t* qh = x + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(x + 192);
    for (int n = 0; n < kQK; n += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        // (d * scale) * q, left to right as in ggml.
        y[l + 0] = d * sc[is + 0] * static_cast<float>(q1);
        y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace

bool kquant_is_supported(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kQ4_0:
    case gguf::TensorType::kQ5_0:
    case gguf::TensorType::kQ4_K:
    case gguf::TensorType::kQ5_K:
    case gguf::TensorType::kQ6_K:
      return true;
    default:
      return false;
  }
}

Status dequantize_row(gguf::TensorType type, const uint8_t* src, float* dst, int64_t n) {
  const uint32_t id = static_cast<uint32_t>(type);
  if (!kquant_is_supported(type)) {
    return make_error("dequantize_row: expected Q4_0, Q5_0, Q4_K, Q5_K or Q6_K, got " + gguf::type_label(id));
  }
  uint64_t block_elems = 0, block_bytes = 0;
  if (!gguf::type_block_size(id, &block_elems, &block_bytes)) {
    return make_error("dequantize_row: no block size for " + gguf::type_label(id));
  }
  if (n < 0 || static_cast<uint64_t>(n) % block_elems != 0) {
    return make_error("dequantize_row: expected a count that is a non-negative multiple of the " +
                      gguf::type_label(id) + " block size " + std::to_string(block_elems) + ", got " +
                      std::to_string(n));
  }
  dequantize_blocks(type, src, dst, n / static_cast<int64_t>(block_elems));
  return Status::success();
}

void dequantize_blocks(gguf::TensorType type, const uint8_t* src, float* dst, int64_t n_blocks) {
  switch (type) {
    case gguf::TensorType::kQ4_0:
      dequantize_q4_0(src, dst, n_blocks);
      break;
    case gguf::TensorType::kQ5_0:
      dequantize_q5_0(src, dst, n_blocks);
      break;
    case gguf::TensorType::kQ4_K:
      dequantize_q4_k(src, dst, n_blocks);
      break;
    case gguf::TensorType::kQ5_K:
      dequantize_q5_k(src, dst, n_blocks);
      break;
    case gguf::TensorType::kQ6_K:
      dequantize_q6_k(src, dst, n_blocks);
      break;
    default:
      break;  // not a block format of this file: the caller checked kquant_is_supported
  }
}

}  // namespace qc
