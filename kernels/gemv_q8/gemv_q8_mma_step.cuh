// The per-block step of the mma GEMV's contract (gemv_q8_mma.cu's header), shared by its register schedule
// (gemv_q8_mma.cu) and its shared-memory schedule (gemv_q8_mma_staged.cu): one place, so the two cannot
// drift apart in a bit.
#pragma once

#include "../common.cuh"
#include "../mma_s8.cuh"

namespace qc::gpu::detail {

// acc (row g, c0), (row g, c1), (row g+8, c0), (row g+8, c1) += v * (xs * f16 scale), one block's biased
// sums dh (dl: hl's second word) of rows g, g + 8 against tokens c0 = 2t, c1 = 2t + 1; wsa, wsb the rows'
// weight scales, s0, s1 the tokens' activation scales. kPair: M >= 2 (at M = 1 only column c0 = 0 holds a
// token, and the odd elements are skipped: the same instructions per element, the same bits).
template <bool kHL, bool kPair>
__device__ __forceinline__ void mma_fold(float (&acc)[4], const int (&dh)[4], const int (&dl)[4], float wsa,
                                         float wsb, float s0, float s1) {
  const float scale[4] = {__fmul_rn(s0, wsa), __fmul_rn(s1, wsa), __fmul_rn(s0, wsb), __fmul_rn(s1, wsb)};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (!kPair && (e & 1)) continue;
    float v = unbias(dh[e]);
    if constexpr (kHL) v = __fmaf_rn(unbias(dl[e]), kInv127, v);
    acc[e] = __fmaf_rn(v, scale[e], acc[e]);
  }
}

}  // namespace qc::gpu::detail
