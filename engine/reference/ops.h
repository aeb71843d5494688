// The operations of the qwen35 forward pass (QWEN35.md sections 2-4, 6), one function each, templated on
// the scalar type T (float or double) so the float path and the double oracle are the same code. Every
// value is decoded from its storage format into T first (decoding F32/F16/BF16/Q8_0 into f32 is exact,
// Q4_0/Q5_0/Q4_K/Q5_K/Q6_K decode to exactly the f32 values ggml's reference gives, and widening to double
// is exact) and all arithmetic then happens in T.
//
// Summation order is part of the specification: a dot product of length n accumulates element i into
// lane i % kLanes and adds the lanes in a fixed tree at the end. The lanes let the compiler vectorise
// without -ffast-math and the result does not depend on how rows are split over threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "model/kquant.h"
#include "model/quant.h"
#include "model/tensor.h"
#include "reference/thread_pool.h"

namespace qc::ref {

inline constexpr int kLanes = 16;        // partial sums per dot product
inline constexpr int kDecodeBlock = 32;  // values decoded at a time (one Q8_0 block)
inline constexpr int kSuperBlock = 256;  // values of one K-quant super-block (decoded whole)

// kLanes running sums. add() must be fed consecutive chunks that start at multiples of kLanes (or the
// final tail), so element i always lands in lane i % kLanes.
template <class T>
struct Lanes {
  T v[kLanes] = {};
  void add(const T* a, const T* b, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) v[l] += a[i + l] * b[i + l];
    }
    for (int l = 0; i + l < n; ++l) v[l] += a[i + l] * b[i + l];
  }
  // Fixed pairwise tree: (0+8, 1+9, ...), then (0+4, ...), (0+2, ...), (0+1).
  T sum() const {
    T t[kLanes];
    for (int l = 0; l < kLanes; ++l) t[l] = v[l];
    for (int w = kLanes / 2; w >= 1; w /= 2) {
      for (int l = 0; l < w; ++l) t[l] += t[l + w];
    }
    return t[0];
  }
};

// sum_i a[i] * b[i] in T, in the lane order above.
template <class T>
T dot(const T* a, const T* b, int64_t n) {
  Lanes<T> acc;
  acc.add(a, b, n);
  return acc.sum();
}

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

template <class T>
T silu(T x) {
  return x / (T(1) + std::exp(-x));
}

// softplus(x) = log(1 + e^x), returning x above 20 as torch.nn.functional.softplus does (threshold 20).
template <class T>
T softplus(T x) {
  return x > T(20) ? x : std::log1p(std::exp(x));
}

// f16 -> f32, exact, inlined for the Q8_0 scales: the 15 magnitude bits shifted into an f32 are the value
// times 2^-112 for normal and subnormal halves alike, so one multiply by 2^112 rebiases it. Inf/NaN
// (exponent 31) go through quant.cpp's general conversion.
inline float half_to_float(uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u) return f16_to_f32(h);
  const uint32_t bits = static_cast<uint32_t>(h & 0x7fffu) << 13;
  float f;
  std::memcpy(&f, &bits, 4);
  f *= 0x1p112f;
  return (h & 0x8000u) ? -f : f;
}

// Decodes the llama.cpp block formats (Q4_0 ... Q6_K) block by block through an f32 buffer on the stack
// (a block is the smallest unit they can be decoded in); values are the f32 ones of kquant.h in any T.
template <class T>
void decode_block_format(DType type, const uint8_t* row, int64_t start, int64_t n, T* out) {
  const gguf::TensorType format = *dtype_block_format(type);
  const int64_t block = dtype_block(type);
  const uint64_t block_bytes = dtype_bytes(type, static_cast<uint64_t>(block));
  float f[kSuperBlock];
  for (int64_t b = 0; b < n / block; ++b) {
    dequantize_blocks(format, row + static_cast<uint64_t>(start / block + b) * block_bytes, f, 1);
    for (int64_t i = 0; i < block; ++i) out[b * block + i] = static_cast<T>(f[i]);
  }
}

// Decodes values [start, start + n) of a weight row into T. For block formats, start and n are multiples
// of dtype_block(type).
template <class T>
void decode_values(DType type, const uint8_t* row, int64_t start, int64_t n, T* out) {
  switch (type) {
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, row + 4 * (start + i), 4);
        out[i] = static_cast<T>(f);
      }
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, row + 2 * (start + i), 2);
        out[i] = static_cast<T>(f16_to_f32(h));
      }
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, row + 2 * (start + i), 2);
        out[i] = static_cast<T>(bf16_to_f32(h));
      }
      return;
    case DType::kQ8_0:
      for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const uint8_t* blk = row + (start / kQ8Block + b) * kQ8BlockBytes;
        uint16_t dh;
        std::memcpy(&dh, blk, 2);
        // d * q is exact in f32 (11-bit scale mantissa times a 7-bit integer), so this equals
        // dequantize_q8_0 in either precision.
        const float d = half_to_float(dh);
        // A local copy: int8_t may alias `out`, which would stop the compiler from vectorising.
        int8_t q[kQ8Block];
        std::memcpy(q, blk + 2, kQ8Block);
        for (int i = 0; i < kQ8Block; ++i)
          out[b * kQ8Block + i] = static_cast<T>(d * static_cast<float>(q[i]));
      }
      return;
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      decode_block_format(type, row, start, n, out);
      return;
  }
}

// A whole row (or vector) of a weight decoded into T.
template <class T>
void decode_row_as(const TensorView& w, int64_t r, T* out) {
  decode_values(w.type, w.row(r), 0, w.cols, out);
}

// y[r] = sum_c W[r][c] * x[c]: one weight row decoded 32 values at a time (a whole 256-value super-block
// for the K-quants) into a small buffer and dotted with x in the lane order. Equal to decoding the whole
// row first: every chunk starts at a multiple of kLanes, so element i still lands in lane i % kLanes, and
// a K-quant row gives the same bits as the F32 row of its decoded values.
template <class T>
T dot_row(const TensorView& w, int64_t r, const T* x) {
  const uint8_t* row = w.row(r);
  const int64_t n = w.cols;
  Lanes<T> acc;
  if (w.type == DType::kQ8_0) {
    // The same products and lane sums as below, with the decode fused into the loop (no buffer round
    // trip): about 1.5x faster for f32 on this path, which is most of a Q8_0 model's time.
    for (int64_t b = 0; b < n / kQ8Block; ++b) {
      const uint8_t* blk = row + b * kQ8BlockBytes;
      uint16_t dh;
      std::memcpy(&dh, blk, 2);
      const float d = half_to_float(dh);
      int8_t q[kQ8Block];
      std::memcpy(q, blk + 2, kQ8Block);
      const T* xb = x + b * kQ8Block;
      for (int h = 0; h < kQ8Block; h += kLanes) {
        for (int l = 0; l < kLanes; ++l)
          acc.v[l] += static_cast<T>(d * static_cast<float>(q[h + l])) * xb[h + l];
      }
    }
    return acc.sum();
  }
  static_assert(kSuperBlock % kLanes == 0 && kDecodeBlock % kLanes == 0);
  if (dtype_block(w.type) == kSuperBlock) {
    // Q4_K, Q5_K, Q6_K: one super-block at a time (their rows are whole super-blocks).
    T sbuf[kSuperBlock];
    for (int64_t i = 0; i < n; i += kSuperBlock) {
      decode_values(w.type, row, i, kSuperBlock, sbuf);
      acc.add(sbuf, x + i, kSuperBlock);
    }
    return acc.sum();
  }
  T buf[kDecodeBlock];
  int64_t i = 0;
  for (; i + kDecodeBlock <= n; i += kDecodeBlock) {
    decode_values(w.type, row, i, kDecodeBlock, buf);
    acc.add(buf, x + i, kDecodeBlock);
  }
  if (i < n) {  // only F32/F16/BF16 rows have a tail (block-format rows are whole blocks)
    decode_values(w.type, row, i, n - i, buf);
    acc.add(buf, x + i, n - i);
  }
  return acc.sum();
}

// y = W x for W [rows][cols] of any dtype. Rows are split over the pool in contiguous ranges; each row is
// computed by one thread with the same code, so y does not depend on the thread count.
template <class T>
void matvec(ThreadPool& pool, const TensorView& w, const T* x, T* y) {
  // About 32k multiply-adds per thread before waking another: below that the wake-up costs more.
  const int64_t min_rows = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, w.cols));
  pool.parallel_for(w.rows, min_rows, [&](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) y[r] = dot_row(w, r, x);
  });
}

// y = x * rsqrt(mean(x^2) + eps) * w  (y may alias x). The weight already holds the +1 of HF's zero-centred
// norms where the model has it (QWEN35.md section 5).
template <class T>
void rmsnorm(const T* x, const T* w, int64_t n, T eps, T* y) {
  const T r = T(1) / std::sqrt(dot(x, x, n) / static_cast<T>(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * r * w[i];
}

// x *= rsqrt(sum x^2 + eps), as transformers' l2norm (eps 1e-6) in the GDN kernel.
template <class T>
void l2norm(T* x, int64_t n, T eps) {
  const T r = T(1) / std::sqrt(dot(x, x, n) + eps);
  for (int64_t i = 0; i < n; ++i) x[i] *= r;
}

// NeoX RoPE on the first rope_dims values of one head: pairs (i, i + rope_dims/2) rotate by
// angle pos * inv_freq[i], inv_freq[i] = theta^(-2i/rope_dims) (precomputed in T). Dims past rope_dims
// pass through unchanged.
template <class T>
void rope(T* x, const T* inv_freq, int rope_dims, int pos) {
  const int half = rope_dims / 2;
  for (int i = 0; i < half; ++i) {
    const T angle = static_cast<T>(pos) * inv_freq[i];
    const T c = std::cos(angle);
    const T s = std::sin(angle);
    const T x0 = x[i];
    const T x1 = x[i + half];
    x[i] = x0 * c - x1 * s;
    x[i + half] = x1 * c + x0 * s;
  }
}

struct ConvShape {
  int64_t channels = 0;  // qkv channels
  int kernel = 0;        // K taps
};

// One step of the causal depthwise conv + SiLU over every channel c:
//   out[c] = silu( sum_{j<K-1} taps[c][j] * window[c][j] + taps[c][K-1] * in[c] )
// window[c] holds the previous K-1 inputs oldest first ([channels][K-1]); it then shifts by one and keeps
// in[c] as the newest.
template <class T>
void conv_step(const T* in, T* window, const T* taps, ConvShape s, T* out) {
  const int km1 = s.kernel - 1;
  for (int64_t c = 0; c < s.channels; ++c) {
    T* win = window + c * km1;
    const T* w = taps + c * s.kernel;
    T acc = T(0);
    for (int j = 0; j < km1; ++j) acc += w[j] * win[j];
    acc += w[km1] * in[c];
    for (int j = 0; j + 1 < km1; ++j) win[j] = win[j + 1];
    if (km1 > 0) win[km1 - 1] = in[c];
    out[c] = silu(acc);
  }
}

struct DeltaShape {
  int dk = 0;  // key head dim (rows of S)
  int dv = 0;  // value head dim (columns of S)
};

// One token of the gated delta rule for one value head, S [dk][dv] (state, updated in place):
//   S = S * exp(g);  mem = S^T k;  delta = beta (v - mem);  S += k delta^T;  o = S^T q
// q and k are already L2-normalised and q scaled by 1/sqrt(dk). `mem` is scratch of dv values.
template <class T>
void delta_rule_step(T* S, const T* q, const T* k, const T* v, T g, T beta, DeltaShape s, T* mem, T* o) {
  const T decay = std::exp(g);
  // S = S * exp(g)
  for (int64_t i = 0; i < int64_t{s.dk} * s.dv; ++i) S[i] *= decay;
  // mem = S^T k   (mem[b] = sum_a S[a][b] k[a], summed over a in order)
  for (int b = 0; b < s.dv; ++b) mem[b] = T(0);
  for (int a = 0; a < s.dk; ++a) {
    const T* Sa = S + int64_t{a} * s.dv;
    for (int b = 0; b < s.dv; ++b) mem[b] += Sa[b] * k[a];
  }
  // delta = beta (v - mem), kept in mem
  for (int b = 0; b < s.dv; ++b) mem[b] = beta * (v[b] - mem[b]);
  // S += k delta^T
  for (int a = 0; a < s.dk; ++a) {
    T* Sa = S + int64_t{a} * s.dv;
    for (int b = 0; b < s.dv; ++b) Sa[b] += k[a] * mem[b];
  }
  // o = S^T q
  for (int b = 0; b < s.dv; ++b) o[b] = T(0);
  for (int a = 0; a < s.dk; ++a) {
    const T* Sa = S + int64_t{a} * s.dv;
    for (int b = 0; b < s.dv; ++b) o[b] += Sa[b] * q[a];
  }
}

struct AttentionShape {
  int head_dim = 0;
  int n_pos = 0;           // positions 0 .. n_pos-1 are attended (causal: n_pos = p + 1)
  int64_t row_stride = 0;  // values between consecutive positions of one KV head in the cache
};

// One query head over the cached keys/values of its KV head:
//   s_t = (q . k_t) / sqrt(head_dim);  w = softmax(s);  out = sum_t w_t v_t
// `scores` is scratch of n_pos values.
template <class T>
void attention_head(const T* q, const T* kcache, const T* vcache, AttentionShape s, T* scores, T* out) {
  const T scale = T(1) / std::sqrt(static_cast<T>(s.head_dim));
  T max_s = -INFINITY;
  for (int t = 0; t < s.n_pos; ++t) {
    scores[t] = dot(q, kcache + t * s.row_stride, s.head_dim) * scale;
    max_s = std::max(max_s, scores[t]);
  }
  T sum = T(0);
  for (int t = 0; t < s.n_pos; ++t) {
    scores[t] = std::exp(scores[t] - max_s);
    sum += scores[t];
  }
  for (int t = 0; t < s.n_pos; ++t) scores[t] /= sum;
  for (int d = 0; d < s.head_dim; ++d) out[d] = T(0);
  for (int t = 0; t < s.n_pos; ++t) {
    const T* vt = vcache + t * s.row_stride;
    for (int d = 0; d < s.head_dim; ++d) out[d] += scores[t] * vt[d];
  }
}

// out = silu(gate) * up (the SwiGLU inner activation).
template <class T>
void swiglu(const T* gate, const T* up, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
}

}  // namespace qc::ref
