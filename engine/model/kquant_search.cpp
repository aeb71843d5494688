#include "model/kquant_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// The lane forms use GCC/Clang vector extensions: a vf is kSearchLanes floats, and +, -, *, / and the
// comparisons act lane by lane with the same IEEE single-precision rounding as scalar code (no FMA: this
// build is ISO C++, where GCC does not contract, and no clone below enables the fma target).
//
// No vf or vi crosses a function boundary by value: the lane functions are target_clones (one of them
// AVX2) and the helpers are not, and a 32-byte vector passed or returned by value between the two is an
// ABI mismatch (GCC warns with -Wpsabi, Clang refuses to compile it). So the helpers take and fill
// references, which are pointers in the ABI, and are always inlined, so no real call is left.

namespace qc::kquant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group counts as all zero

typedef float vf __attribute__((vector_size(4 * kSearchLanes)));
typedef int32_t vi __attribute__((vector_size(4 * kSearchLanes)));

[[gnu::always_inline]] inline void load(vf& v, const float* p) {
  std::memcpy(&v, p, sizeof(v));
}

// l = clamp(nearest_int(f), lo, hi) lane by lane (nearest_int's bit trick).
[[gnu::always_inline]] inline void nearest_clamped(vi& l, const vf& f, int lo, int hi) {
  const vf val = f + 12582912.f;
  l = (__builtin_bit_cast(vi, val) & 0x007fffff) - 0x00400000;
  l = l < lo ? vi{} + lo : l;
  l = l > hi ? vi{} + hi : l;
}

[[gnu::always_inline]] inline bool any(const vi& m) {
  int32_t r = 0;
  for (int k = 0; k < kSearchLanes; ++k) r |= m[k];
  return r != 0;
}

}  // namespace

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = diff * diff;
    const float w = weights[i];
    best_error += w * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * (x[i] - min));
      l = std::max(0, std::min(nmax, l));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        diff = diff * diff;
        const float w = weights[i];
        cur_error += w * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// The scalar code above with each lane a group. Lanes the scalar code would leave early (all values equal
// and <= 0: max == min) run the search on inf/NaN, which selects nothing (cur_error < best_error is false
// for NaN), and take the early exit's outputs at the end. Compiled twice (target_clones): AVX2 where the
// CPU has it, baseline SSE2 otherwise; neither enables FMA, so both give the scalar bits.
[[gnu::target_clones("avx2", "default")]] void make_qkx2_quants_lanes(int n, int nmax, const float* x,
                                                                      const float* weights, uint8_t* L,
                                                                      float* scale_out, float* the_min,
                                                                      float rmin, float rdelta, int nstep) {
  // Zeroed so that the compiler sees them set whatever n is (n is at least 1; ~1 KB, noise next to the
  // search).
  vf X[kMaxGroupSize] = {}, W[kMaxGroupSize] = {};
  vi Lv[kMaxGroupSize] = {}, Laux[kMaxGroupSize] = {};
  for (int i = 0; i < n; ++i) {
    load(X[i], x + i * kSearchLanes);
    load(W[i], weights + i * kSearchLanes);
  }
  const vf zero{};
  vf min = X[0];
  vf max = X[0];
  vf sum_w = W[0];
  vf sum_x = sum_w * X[0];
  for (int i = 1; i < n; ++i) {
    min = X[i] < min ? X[i] : min;
    max = X[i] > max ? X[i] : max;
    sum_w += W[i];
    sum_x += W[i] * X[i];
  }
  min = min > 0 ? zero : min;
  const vi flat = max == min;
  const vf flat_min = min;
  vf iscale = static_cast<float>(nmax) / (max - min);
  vf scale = 1.0f / iscale;
  vf best_error = zero;
  for (int i = 0; i < n; ++i) {
    nearest_clamped(Lv[i], iscale * (X[i] - min), 0, nmax);
    vf diff = scale * __builtin_convertvector(Lv[i], vf) + min - X[i];
    diff = diff * diff;
    best_error += W[i] * diff;
  }
  for (int is = 0; nstep >= 1 && is <= nstep; ++is) {
    iscale = (zero + (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax))) / (max - min);
    vf sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (int i = 0; i < n; ++i) {
      nearest_clamped(Laux[i], iscale * (X[i] - min), 0, nmax);
      const vf w = W[i];
      const vf fl = __builtin_convertvector(Laux[i], vf);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * X[i];
    }
    const vf D = sum_w * sum_l2 - sum_l * sum_l;
    const vi d_pos = D > 0;
    if (!any(d_pos)) continue;
    vf this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    vf this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    const vi min_pos = this_min > 0;
    this_min = min_pos ? zero : this_min;
    this_scale = min_pos ? sum_xl / sum_l2 : this_scale;
    vf cur_error = zero;
    for (int i = 0; i < n; ++i) {
      vf diff = this_scale * __builtin_convertvector(Laux[i], vf) + this_min - X[i];
      diff = diff * diff;
      cur_error += W[i] * diff;
    }
    const vi take = d_pos & (cur_error < best_error);
    if (!any(take)) continue;
    for (int i = 0; i < n; ++i) Lv[i] = take ? Laux[i] : Lv[i];
    best_error = take ? cur_error : best_error;
    scale = take ? this_scale : scale;
    min = take ? this_min : min;
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < kSearchLanes; ++k)
      L[i * kSearchLanes + k] = flat[k] ? 0 : static_cast<uint8_t>(Lv[i][k]);
  }
  for (int k = 0; k < kSearchLanes; ++k) {
    scale_out[k] = flat[k] ? 0.f : scale[k];
    the_min[k] = -(flat[k] ? flat_min[k] : min[k]);
  }
}

float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {  // all zero
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(iscale * x[i]);
    l = std::max(-nmax, std::min(nmax - 1, l));
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * x[i]);
      l = std::max(-nmax, std::min(nmax - 1, l));
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * x[i]);
        L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// The scalar code above with each lane a group; all-zero lanes (amax < GROUP_MAX_EPS) run on whatever
// their division gives and take the early exit's outputs at the end. fabs is the sign bit cleared, as
// std::fabs.
[[gnu::target_clones("avx2", "default")]] void make_qx_quants_lanes(int n, int nmax, const float* x,
                                                                    int8_t* L, float* scale_out) {
  vf X[kMaxGroupSize] = {};  // zeroed as in make_qkx2_quants_lanes
  vi Lv[kMaxGroupSize] = {};
  for (int i = 0; i < n; ++i) load(X[i], x + i * kSearchLanes);
  const vf zero{};
  vf max = zero;
  vf amax = zero;
  for (int i = 0; i < n; ++i) {
    const vf ax = __builtin_bit_cast(vf, __builtin_bit_cast(vi, X[i]) & 0x7fffffff);
    const vi larger = ax > amax;
    amax = larger ? ax : amax;
    max = larger ? X[i] : max;
  }
  const vi all_zero = amax < kGroupMaxEps;
  vf iscale = static_cast<float>(-nmax) / max;
  vf sumlx = zero;
  vf suml2 = zero;
  for (int i = 0; i < n; ++i) {
    vi l;
    nearest_clamped(l, iscale * X[i], -nmax, nmax - 1);
    Lv[i] = l + nmax;
    const vf w = X[i] * X[i];
    const vf fl = __builtin_convertvector(l, vf);
    sumlx += w * X[i] * fl;
    suml2 += w * fl * fl;
  }
  vf scale = suml2 != 0.0f ? sumlx / suml2 : zero;
  vf best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = (zero - (static_cast<float>(nmax) + 0.1f * static_cast<float>(is))) / max;
    vi Laux[kMaxGroupSize] = {};
    sumlx = suml2 = zero;
    for (int i = 0; i < n; ++i) {
      vi l;
    nearest_clamped(l, iscale * X[i], -nmax, nmax - 1);
      Laux[i] = l;
      const vf w = X[i] * X[i];
      const vf fl = __builtin_convertvector(l, vf);
      sumlx += w * X[i] * fl;
      suml2 += w * fl * fl;
    }
    const vi take = (suml2 > 0) & (sumlx * sumlx > best * suml2);
    if (!any(take)) continue;
    for (int i = 0; i < n; ++i) Lv[i] = take ? Laux[i] + nmax : Lv[i];
    scale = take ? sumlx / suml2 : scale;
    best = take ? scale * sumlx : best;
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < kSearchLanes; ++k)
      L[i * kSearchLanes + k] = all_zero[k] ? 0 : static_cast<int8_t>(Lv[i][k]);
  }
  for (int k = 0; k < kSearchLanes; ++k) scale_out[k] = all_zero[k] ? 0.f : scale[k];
}

}  // namespace qc::kquant
