// The scale searches of ggml's K-quant reference (make_qkx2_quants for Q4_K/Q5_K, make_qx_quants for Q6_K),
// each in two forms that give the same bits:
//   - the scalar reference, ggml's loop operation for operation (see kquant_quantize.h for the commit and
//     the exactness argument);
//   - a lane form that runs kSearchLanes independent groups at once, one group per SIMD lane. Every lane
//     performs the scalar code's float operations in the scalar code's order (the sums still run over the
//     values one by one; the lanes are different groups, never different values of one group), and the
//     branches become per-lane selects, so each lane's result is bit-identical to a scalar call.
// Why: the scalar searches are chains of dependent float adds (16-21 candidate scales x 16-32 values per
// group), latency-bound: quantising cost ~60 ns per weight on one core of the 2-core build machine (27b
// preset's layers in q4_k_m; 84% of qwenchat-mkmodel's time). The lane form, one AVX2 (or two SSE2) vectors
// per step, brings that to ~12 ns per weight, measured the same way.
#pragma once

#include <cstdint>
#include <cstring>

namespace qc::kquant {

constexpr int kSearchLanes = 8;    // groups searched at once: Q4_K/Q5_K's 8 sub-blocks, half of Q6_K's 16
constexpr int kMaxGroupSize = 32;  // values per group in the lane forms (Q4_K/Q5_K 32, Q6_K 16)

// ggml's nearest_int: adding 1.5 * 2^23 leaves round-to-nearest-even(fval) in the low mantissa bits. Exact
// for |fval| <= 4194303 (ggml asserts that in debug builds only); outside it this returns the same wrapped
// value ggml's release build does, and clamping by the caller keeps it in range. No UB: bits via memcpy.
inline int nearest_int(float fval) {
  const float val = fval + 12582912.f;
  int32_t i;
  std::memcpy(&i, &val, sizeof(i));
  return (i & 0x007fffff) - 0x00400000;
}

// make_qkx2_quants with use_mad = false: a scale (returned) and a min (returned as -min, >= 0) for n values
// with levels 0..nmax in L. Laux is n bytes of scratch.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep);

// make_qkx2_quants on kSearchLanes groups of n <= kMaxGroupSize values, lane-minor: value i of group k is
// x[i * kSearchLanes + k] (weights and L alike); scale[k] and the_min[k] as the scalar form returns them.
void make_qkx2_quants_lanes(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* scale,
                            float* the_min, float rmin, float rdelta, int nstep);

// make_qx_quants with rmse_type 1 and qw NULL (weights x^2): a signed scale (returned) for n values with
// levels -nmax..nmax-1, stored in L offset by nmax.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L);

// make_qx_quants on kSearchLanes groups of n <= kMaxGroupSize values, lane-minor as above.
void make_qx_quants_lanes(int n, int nmax, const float* x, int8_t* L, float* scale);

}  // namespace qc::kquant
